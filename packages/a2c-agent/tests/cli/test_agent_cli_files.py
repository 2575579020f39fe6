"""``a2c-agent`` output files and names, as a real subprocess against the real Server and a
scripted Computer: nothing is overwritten, a bad destination is
refused (exit 2) before any request is sent, and two runs never take each other's name."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import sys
from pathlib import Path

from a2c_agent._cli._files import save_binaries
from a2c_protocol import CallToolResult, Event
from a2c_testkit.scripted_computer import scripted_tool

from .test_agent_cli import OFFICE, run_cli

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def image_result(data: bytes) -> CallToolResult:
    item = {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": "image/png"}
    return CallToolResult(content=[{"type": "text", "text": "shot"}, item])


async def test_call_never_overwrites_a_saved_item(make_computer, server, tmp_path):
    computer = await make_computer()
    computer.tools = [scripted_tool("shot")]
    computer.tool_results["shot"] = image_result(PNG)
    mine = tmp_path / "shot-1.png"
    mine.write_bytes(b"my own file")

    paths = []
    for _ in range(2):
        code, out, err = await run_cli(
            server.url, "--json", "call", "box-1", "shot", "{}", "--save-dir", str(tmp_path)
        )
        assert code == 0, err
        saved = Path(json.loads(out)["content"][1]["_meta"]["a2c_saved_to"])
        assert f"saved to {saved}" in err  # the user is told where each item went
        paths.append(saved)

    assert paths == [tmp_path / "shot-1-1.png", tmp_path / "shot-1-2.png"]
    assert all(p.read_bytes() == PNG for p in paths)
    assert mine.read_bytes() == b"my own file"


async def test_without_save_dir_items_go_to_a_new_temp_dir_not_the_current_one(
    make_computer, server, tmp_path
):
    """Binary items land in a new temp dir, never in whatever directory the user stood in."""
    computer = await make_computer()
    computer.tools = [scripted_tool("shot"), scripted_tool("words")]
    computer.tool_results["shot"] = image_result(PNG)
    computer.tool_results["words"] = CallToolResult(content=[{"type": "text", "text": "hi"}])
    temp = tmp_path / "tmp"
    here = tmp_path / "here"
    temp.mkdir()
    here.mkdir()
    env = {"TMPDIR": str(temp)}

    code, out, err = await run_cli(server.url, "--json", "call", "box-1", "shot", "{}",
                                   cwd=here, env=env)  # fmt: skip
    assert code == 0, err
    saved = Path(json.loads(out)["content"][1]["_meta"]["a2c_saved_to"])
    assert saved.parent.parent == temp and saved.parent.name.startswith("a2c-agent-shot-")
    assert saved.name == "shot-1.png" and saved.read_bytes() == PNG
    assert saved.parent.stat().st_mode & 0o777 == 0o700  # private, like the items may be
    assert f"saved to {saved}" in err
    assert list(here.iterdir()) == []

    code, out, err = await run_cli(server.url, "--json", "call", "box-1", "words", "{}",
                                   cwd=here, env=env)  # fmt: skip
    assert code == 0, err
    assert [p.name for p in temp.iterdir()] == [saved.parent.name]  # nothing made for text


def test_concurrent_saves_pick_distinct_names(tmp_path):
    result = {"content": [{"type": "image", "data": base64.b64encode(PNG).decode()}]}

    async def save_many() -> list[str]:
        done = await asyncio.gather(
            *(asyncio.to_thread(save_binaries, result, tmp_path, "t") for _ in range(8))
        )
        return [d["content"][0]["_meta"]["a2c_saved_to"] for d in done]

    names = asyncio.run(save_many())
    assert len(set(names)) == 8 and len(list(tmp_path.iterdir())) == 8


async def test_bad_destinations_are_refused_before_any_request(make_computer, server, tmp_path):
    computer = await make_computer()
    computer.tools = [scripted_tool("shot")]
    computer.tool_results["shot"] = image_result(PNG)
    a_file = tmp_path / "a-file"
    a_file.write_bytes(b"keep")
    missing = tmp_path / "missing" / "dir"

    cases = [
        (("call", "box-1", "shot", "{}", "--save-dir", str(a_file)), "not a directory"),
        (("call", "box-1", "shot", "{}", "--save-dir", str(missing)), "mkdir -p"),
        (("blob", "box-1", "h", "-o", str(missing / "x")), "does not exist"),
        (("blob", "box-1", "h", "-o", str(tmp_path)), "is a directory"),
        (("blob", "box-1", "h", "-o", str(a_file)), "--overwrite"),
        (("skill", "box-1", "s", "-o", str(tmp_path)), "is a directory"),
        (("skill", "box-1", "s", "-o", str(missing / "x")), "does not exist"),
        (("skill", "box-1", "s", "-o", str(a_file)), "--overwrite"),
        (("desktop", "box-1", "--window", "window://x/y?q=1"), "--window"),
    ]
    for argv, expected in cases:
        code, out, err = await run_cli(server.url, *argv)
        assert (code, out) == (2, ""), (argv, code, err)
        assert expected in err and "Traceback" not in err, (argv, err)

    assert not (tmp_path / "missing").exists()  # parents are never created
    assert a_file.read_bytes() == b"keep"
    for event in (Event.TOOL_CALL, Event.GET_BLOB, Event.GET_SKILL, Event.GET_DESKTOP):
        assert computer.received(event) == [], event


async def test_overwrite_replaces_an_existing_output_file(make_computer, server, tmp_path):
    computer = await make_computer()
    chunk = {
        "mime_type": "image/png",
        "total_size": len(PNG),
        "sha256": hashlib.sha256(PNG).hexdigest(),
        "chunk_offset": 0,
        "eof": True,
        "blob": base64.b64encode(PNG).decode(),
    }
    computer.on(
        Event.GET_BLOB,
        lambda p: {**chunk, "blob_handle": p["blob_handle"], "req_id": p["req_id"]},
    )
    target = tmp_path / "x.png"
    target.write_bytes(b"old")
    code, _, err = await run_cli(server.url, "blob", "box-1", "h", "-o", str(target))
    assert code == 2 and "--overwrite" in err and target.read_bytes() == b"old"
    code, out, err = await run_cli(
        server.url, "blob", "box-1", "h", "-o", str(target), "--overwrite"
    )
    assert code == 0, err
    assert target.read_bytes() == PNG and json.loads(out)["file"] == str(target)


async def run_in(url: str, office: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_agent", "--server", url, "--office", office, *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def test_default_names_do_not_collide_across_offices(make_computer, server):
    computer = await make_computer()
    watcher = await run_in(server.url, OFFICE, "--json", "watch", "--count", "1")
    try:
        entered = await computer.wait_for_notification(Event.NOTIFY_ENTER_OFFICE, timeout=120)
        assert entered["agent"].startswith("a2c-agent-cli-")
        other = await run_in(server.url, "office-9", "--json", "room")
        out, err = await asyncio.wait_for(other.communicate(), 120)
        assert other.returncode == 0, err.decode()
        (me,) = json.loads(out)
        assert me["name"].startswith("a2c-agent-cli-") and me["name"] != entered["agent"]
    finally:
        watcher.kill()
        await watcher.wait()


async def test_a_taken_name_hints_at_name(make_computer, server):
    await make_computer(office_id="office-9")  # names are unique per office
    process = await run_in(server.url, "office-9", "--name", "box-1", "room")
    _, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 1
    assert "already taken" in err.decode() and "--name" in err.decode()
