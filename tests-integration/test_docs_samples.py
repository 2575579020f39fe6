"""Samples and claims in docs/ checked against real runs.

The ``/healthz`` answers shown are a real ``a2c-server``'s; the ``a2c-computer check``
output in getting-started.md is what the command prints for that page's configuration; the
pages name every protocol line a Server serves (not "exactly one MINOR"); no example binds
a Server off loopback without a client token; no configuration example starts a Python MCP
server with a bare ``"python"``; no page installs a role by name from a package index (the
distributions are not on one).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from a2c_testkit.processes import bin_path
from a2c_testkit.triangle import server_process

DOCS = Path(__file__).resolve().parents[1] / "docs"
JSON_BLOCK = re.compile(r"```json\n(?P<body>.*?)```", re.S)
SHELL_BLOCK = re.compile(r"```(?:sh|console|bash)\n(?P<body>.*?)```", re.S)


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _json_after(text: str, marker: str) -> dict[str, Any]:
    block = JSON_BLOCK.search(text, text.index(marker))
    assert block is not None, marker
    document: dict[str, Any] = json.loads(block["body"])
    return document


async def _real_health(procs: Any) -> dict[str, Any]:
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        httpx.AsyncClient() as http,
    ):
        health: dict[str, Any] = (await http.get(f"{server.url}/healthz")).json()
    return health


async def test_healthz_samples_are_a_real_servers_answer(procs: Any) -> None:
    real = await _real_health(procs)
    started = _json_after(_page("getting-started.md"), "curl http://127.0.0.1:8000/healthz")
    assert started == real  # a fresh Server: nothing connected yet
    shown = _json_after(_page("server.md"), "## Health endpoint")
    assert list(shown) == list(real)  # the same fields, in the same order
    counts = ("connections", "offices")
    assert {k: v for k, v in shown.items() if k not in counts} == {
        k: v for k, v in real.items() if k not in counts
    }


async def test_the_pages_name_every_protocol_line_a_server_serves(procs: Any) -> None:
    lines = {".".join(v.split(".")[:2]) for v in (await _real_health(procs))["protocols"]}
    assert len(lines) >= 2
    server = _page("server.md")
    section = server[server.index("## Several protocol versions side by side") :]
    section = section[: section.index("\n## ")]
    upgrade = _page("upgrade-0.1-to-0.2.md")
    operators = upgrade[upgrade.index("## Server operators") :]
    for text in (section, operators):
        assert "exactly one protocol MINOR" not in text
        assert all(f"{line} " in text or f"{line}," in text for line in lines), (lines, text)


def _check_sample() -> str:
    text = _page("getting-started.md")
    start = text.index("$ a2c-computer check --config computer.json")
    body = text[text.index("\n", start) + 1 :]
    return body[: body.index("\n$ ")] + "\n"


def test_the_check_sample_is_what_check_prints(tmp_path: Path) -> None:
    # The configuration getting-started.md writes (its Python block), in a directory of its
    # own: the same desk server, by this interpreter's absolute path.
    config = {"servers": {"desk": {
        "type": "stdio", "name": "desk", "default_tool_meta": {"auto_apply": True},
        "server_parameters": {"command": sys.executable,
                              "args": ["-m", "a2c_computer.examples.desk_server"]},
    }}}  # fmt: skip
    (tmp_path / "computer.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    done = subprocess.run(
        [bin_path("a2c-computer"), "check", "--config", "computer.json"],
        capture_output=True, text=True, timeout=180, cwd=tmp_path, stdin=subprocess.DEVNULL,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == _check_sample()


def _commands(text: str) -> list[str]:
    """Shell commands of a page's code blocks, continuation lines joined."""
    commands = []
    for block in SHELL_BLOCK.finditer(text):
        joined = re.sub(r"\\\n\s*", " ", block["body"])
        commands += [line.removeprefix("$ ") for line in joined.splitlines()]
    return commands


LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
CLIENT_AUTH = ("A2C_SERVER_AUTH_TOKEN=", "--auth-token", "A2C_SERVER_JWT_", "--jwt-")


def test_no_example_binds_a_server_off_loopback_without_a_client_token() -> None:
    checked = 0
    for page in sorted(DOCS.glob("*.md")):
        for command in _commands(page.read_text(encoding="utf-8")):
            host = re.search(r"a2c-server\b.*--host[ =](\S+)", command)
            if host is None or host[1] in LOOPBACK:
                continue
            checked += 1
            assert any(auth in command for auth in CLIENT_AUTH), f"{page.name}: {command}"
    assert checked >= 2


def test_no_config_example_starts_a_bare_python() -> None:
    for page in sorted(DOCS.glob("*.md")):
        for block in JSON_BLOCK.finditer(page.read_text(encoding="utf-8")):
            assert not re.search(r'"command":\s*"python3?"', block["body"]), page.name


def test_no_page_installs_a_role_by_name_from_an_index() -> None:
    by_name = re.compile(r"pip install\s+['\"]?a2c-(?:agent|computer|server|protocol-core)\b")
    for page in sorted(DOCS.glob("*.md")):
        found = by_name.search(page.read_text(encoding="utf-8"))
        assert found is None, f"{page.name}: {found[0] if found else ''}"
