"""``uv run a2c-demo`` works from the README: alone, and against a running Server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from a2c_testkit.processes import bin_path, spawn
from a2c_testkit.triangle import server_process

SECTIONS = [
    "1. Handshake",
    "2. Office members",
    "3. Tools of demo-box",
    "4. A tool call",
    "5. The desktop",
    "6. Resources of MCP server 'desk'",
    "7. A live desktop update",
    "received notify:update_desktop for computer='demo-box'",
    "8. Skills of demo-box",
    "mcp:desk:desk-notes",
    "# Desk notes",
    "9. A tool that asks the user",
    "helpdesk on demo-box asks: 'When should the meeting be, and how long?' (form fields: day, minutes)",
    # what the MCP server got back is what the Agent's handler answered, through the office
    "book_meeting → isError=False: booked 45 min on 2026-12-08: demo review",
    "10. A refused handshake",
    "ProtocolVersionError: server 0.2.3, client 0.1.0, accepts 0.2.0..0.2.999",
    "11. A join outside the grant",
    "Done",
]


def _demo_mcp_servers() -> set[int]:
    """Live example MCP servers started the way the demo starts them."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (b"a2c_computer.examples.desk_server" in argv and b"--tick" in argv) or (
            b"a2c_computer.examples.ask_server" in argv
        ):
            found.add(int(entry.name))
    return found


def _descendants(root: int) -> set[int]:
    """The live processes below ``root`` (its children, theirs, ...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # Field 4 of stat is the parent; the name (field 2) may hold blanks.
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


async def _run_demo(procs: Any, *args: str) -> str:
    async with spawn("demo", [bin_path("a2c-demo"), *args], log_dir=procs.log_dir) as demo:
        procs.track(demo)
        # The demo's own MCP servers, told apart from another demo's (the other variant of
        # this test may run on another worker at the same time) by their ancestry.
        its_servers: set[int] = set()
        async with asyncio.timeout(180):
            while demo.running:
                its_servers |= _demo_mcp_servers() & _descendants(demo.popen.pid)
                await asyncio.sleep(0.1)
        assert demo.popen.returncode == 0, demo.logs()
        assert its_servers, "the demo's MCP servers were never seen running"
        # Checked before spawn() cleans up the group: the demo itself left nothing behind.
        assert _demo_mcp_servers() & its_servers == set()
        return demo.logs()


@pytest.mark.parametrize("external", [False, True], ids=["own-server", "running-server"])
async def test_demo_tours_the_protocol_and_exits_cleanly(
    procs: Any, tmp_path: Path, external: bool
) -> None:
    if external:
        async with server_process(procs.log_dir, track=procs.track) as server:
            output = await _run_demo(procs, "--server", server.url)
            assert f"Server {server.url} (already running)" in output
    else:
        output = await _run_demo(procs)
        assert "(started here) runs protocol 0.2.3" in output
        assert "Forbidden: this identity may not join office 'payroll-" in output
    positions = [output.find(section) for section in SECTIONS]
    assert all(p >= 0 for p in positions), [
        s for s, p in zip(SECTIONS, positions, strict=True) if p < 0
    ]
    assert positions == sorted(positions)
    assert "agent     demo-agent   a2c_version=0.2.3" in output
    assert "computer  demo-box     a2c_version=0.2.3" in output
    assert "window://org.a2c.example.desk/panel/status" in output
    assert "Traceback" not in output


async def test_demo_version() -> None:
    process = await asyncio.create_subprocess_exec(
        bin_path("a2c-demo"), "--version",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    assert out.decode().startswith("a2c-demo 0.") and "protocol 0.2." in out.decode()


@pytest.mark.parametrize(
    ("url", "code", "said"),
    [
        ("http://127.0.0.1:9", 1, "a2c-demo: error: cannot reach the Server at "
         "http://127.0.0.1:9: All connection attempts failed; start one with 'a2c-server'"),
        ("127.0.0.1:9", 2, "did you mean http://127.0.0.1:9?"),
    ],
)  # fmt: skip
async def test_demo_against_a_dead_server_says_so_in_one_line(
    url: str, code: int, said: str
) -> None:
    """One line naming the cause, never a raw httpx traceback."""
    process = await asyncio.create_subprocess_exec(
        bin_path("a2c-demo"), "--server", url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == code
    assert said in err.decode() and "Traceback" not in err.decode()
    assert out.decode() == ""  # no tour heading before the refusal
