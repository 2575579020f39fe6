"""Skills from real MCP servers in all three staging modes, through a real Computer."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import http.server
import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from a2c_computer import BlobUnavailableError, Computer, SkillSettings
from a2c_protocol import Event, SkillNotFoundError
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.mcp_servers.skills import ASSET_BYTES, INLINE_FILES
from a2c_testkit.skill_packages import tar_gz


def package(folder: Path, name: str, description: str) -> Path:
    root = folder / name
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n"
    )
    (root / "references" / "notes.txt").write_text(f"notes of {name}\n")
    return root


@pytest.fixture
def archive_url(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A real HTTP server on loopback serving one skill archive; yields (url, sha256)."""
    served = tmp_path / "served"
    served.mkdir()
    data = tar_gz(package(tmp_path / "src", "release-notes", "Write release notes."))
    (served / "release-notes.tar.gz").write_bytes(data)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/release-notes.tar.gz"
        yield url, hashlib.sha256(data).hexdigest()
    finally:
        httpd.shutdown()
        httpd.server_close()


async def until(check: Any, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)


async def test_skills_of_every_source_are_listed_read_and_follow_their_server(
    tmp_path: Path, archive_url: tuple[str, str]
) -> None:
    url, sha = archive_url
    package(tmp_path / "user", "log-triage", "Triage logs.")
    mounted = package(tmp_path / "mounts", "pdf-fill", "Fill PDFs.")
    (mounted / "escape").symlink_to("/etc")  # never followed when staging
    server = stdio_server_config(
        "doc tools.v2", "skills", "--mounted", str(mounted), "--archive", url,
        "--archive-name", "release-notes", "--archive-sha256", sha,
    )  # fmt: skip
    settings = SkillSettings(
        install_dir=tmp_path / "install",
        user_dir=tmp_path / "user",
        poll_interval=0.1,
        debounce=0.05,
    )
    announced: list[Event] = []
    async with Computer(
        {"servers": {"doc tools.v2": server}}, name="box", skills=settings
    ) as computer:
        computer.add_update_listener(announced.append)
        refs = computer.skills.skills()
        assert [(r.name, r.source) for r in refs] == [
            ("log-triage", "user"),
            ("mcp:doc_tools_v2:inline-guide", "mcp:doc_tools_v2"),
            ("mcp:doc_tools_v2:pdf-fill", "mcp:doc_tools_v2"),
            ("mcp:doc_tools_v2:release-notes", "mcp:doc_tools_v2"),
        ]
        inline = refs[1]
        assert (
            inline.uri == "skill://org.a2c.test.skills/inline-guide" and inline.version == "1.0.0"
        )
        assert inline.allowed_tools == ["echo"]
        staged = Path(refs[2].path)
        assert staged.is_relative_to(tmp_path / "install") and not (staged / "escape").exists()
        assert oct((tmp_path / "install").stat().st_mode & 0o777) == "0o700"

        body = (await computer.skills.read("mcp:doc_tools_v2:inline-guide", None, "r")).body
        assert body == INLINE_FILES["SKILL.md"].decode().split("---\n", 2)[2]
        usage = await computer.skills.read(
            "mcp:doc_tools_v2:inline-guide", "references/usage.md", "r"
        )
        assert usage.body == INLINE_FILES["references/usage.md"].decode()
        asset = await computer.skills.read("mcp:doc_tools_v2:inline-guide", "assets/data.bin", "r")
        assert asset.blob_handle and asset.sha256 == hashlib.sha256(ASSET_BYTES).hexdigest()
        chunk = computer.blob_store.read_chunk(asset.blob_handle, 0, len(ASSET_BYTES))
        assert chunk.data == ASSET_BYTES and chunk.eof
        notes = await computer.skills.read(
            "mcp:doc_tools_v2:release-notes", "references/notes.txt", "r"
        )
        assert notes.body == "notes of release-notes\n"
        mounted_md = await computer.skills.read("mcp:doc_tools_v2:pdf-fill", "SKILL.md", "r")
        assert mounted_md.body == "# pdf-fill\n"

        # The server stops publishing one skill: one announcement, the list shrinks.
        await computer.call_tool("remove_skill", {"name": "pdf-fill"})
        await until(lambda: len(computer.skills.skills()) == 3)
        await until(lambda: Event.UPDATE_SKILLS in announced)
        with pytest.raises(SkillNotFoundError):
            await computer.skills.read("mcp:doc_tools_v2:pdf-fill", None, "r")

        # The MCP server dies: its skills are hidden; it is restarted: they are back.
        pid = int((await computer.call_tool("pid", {})).content[0]["text"])
        seen = announced.count(Event.UPDATE_SKILLS)
        os.kill(pid, signal.SIGKILL)
        await until(lambda: [r.name for r in computer.skills.skills()] == ["log-triage"])
        await until(lambda: len(computer.skills.skills()) == 4)  # restarted: all published again
        await until(lambda: announced.count(Event.UPDATE_SKILLS) > seen)


@pytest.mark.parametrize("server_name", ["s" * 65, "a-server-whose-name-is-far-too-long-" * 2])
async def test_a_server_whose_name_makes_too_long_a_segment_registers_no_skill(
    tmp_path: Path, server_name: str
) -> None:
    # mcp:<segment>:<skill> with a segment over 64 characters fails the lexer: listing such
    # a skill would promise a name every client:get_skill refuses with 4016.
    settings = SkillSettings(install_dir=tmp_path / "install", user_dir=tmp_path / "none")
    server = stdio_server_config(server_name, "skills")
    async with Computer(
        {"servers": {server_name: server}}, name="box", skills=settings
    ) as computer:
        assert computer.server_states()[server_name].status == "ready"  # its tools still serve
        assert computer.skills.skills() == []
        (refusal,) = computer.skills.refusals()[server_name]
        assert "at most 64" in refusal and "refused" in refusal


@contextlib.asynccontextmanager
async def docs_skills(tmp_path: Path) -> AsyncIterator[tuple[Computer, list[Event]]]:
    """A Computer with the testkit skills server as ``docs``; announcements from now on."""
    settings = SkillSettings(
        install_dir=tmp_path / "install", user_dir=tmp_path / "none", debounce=0.05
    )
    server = stdio_server_config("docs", "skills")
    announced: list[Event] = []
    async with Computer({"servers": {"docs": server}}, name="box", skills=settings) as computer:
        computer.add_update_listener(announced.append)
        await asyncio.sleep(0.2)  # start-up announcements are over
        announced.clear()
        yield computer, announced


async def test_a_resource_updated_for_a_skill_restages_it_and_announces_once(
    tmp_path: Path,
) -> None:
    async with docs_skills(tmp_path) as (computer, announced):
        (ref,) = computer.skills.skills()
        assert (ref.name, ref.version) == ("mcp:docs:inline-guide", "1.0.0")
        # The server changes the skill's version and sends resources/updated for its URI.
        await computer.call_tool("bump", {"name": "inline-guide"})
        await until(lambda: computer.skills.skills()[0].version == "1.0.1")
        await until(lambda: announced.count(Event.UPDATE_SKILLS) == 1)
        await asyncio.sleep(0.3)
        assert announced.count(Event.UPDATE_SKILLS) == 1


async def test_a_list_change_that_leaves_the_skills_alone_announces_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with docs_skills(tmp_path) as (computer, announced):
        with caplog.at_level(logging.DEBUG, logger="a2c_computer.skills"):
            await computer.call_tool("touch", {})
            await until(lambda: "skill set unchanged" in caplog.text)  # it was looked at
            await asyncio.sleep(0.3)  # past the announcement debounce
        assert announced.count(Event.UPDATE_SKILLS) == 0
        assert [r.name for r in computer.skills.skills()] == ["mcp:docs:inline-guide"]


async def test_while_its_server_is_down_a_skill_is_unknown_and_its_handle_refused(
    tmp_path: Path,
) -> None:
    # The server is killed and every restart fails until the flag file goes: the
    # orphaned state lasts as long as the test needs it, whatever the machine's speed.
    flag = tmp_path / "down"
    settings = SkillSettings(
        install_dir=tmp_path / "install", user_dir=tmp_path / "none", debounce=0.05
    )
    server = stdio_server_config("docs", "skills", "--down-while", str(flag))
    name = "mcp:docs:inline-guide"
    async with Computer({"servers": {"docs": server}}, name="box", skills=settings) as computer:
        asset = await computer.skills.read(name, "assets/data.bin", "r")
        assert asset.blob_handle
        pid = int((await computer.call_tool("pid", {})).content[0]["text"])
        flag.touch()
        os.kill(pid, signal.SIGKILL)
        await until(lambda: computer.skills.skills() == [])
        with pytest.raises(SkillNotFoundError):
            await computer.skills.read(name, None, "r")
        with pytest.raises(BlobUnavailableError) as refused:
            computer.blob_store.read_chunk(asset.blob_handle, 0, 16)
        assert refused.value.reason in ("forbidden", "gone")
        flag.unlink()  # the next restart succeeds: the skill and its file are back
        await until(lambda: [r.name for r in computer.skills.skills()] == [name])
        again = await computer.skills.read(name, "assets/data.bin", "r")
        assert again.blob_handle
        chunk = computer.blob_store.read_chunk(again.blob_handle, 0, len(ASSET_BYTES))
        assert chunk.data == ASSET_BYTES
