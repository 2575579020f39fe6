"""The landing dir against a real ``a2c-computer run``:
planted links are never followed, a missing dir fails the start, refusals name no
local path, the budget counts files, retention cleans up. Every process is real."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent
from a2c_protocol import BlobWriteError
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.processes import bin_path
from a2c_testkit.triangle import computer_process, server_process, write_config

if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX links and process groups")

HOURS_AGO = time.time() - 3 * 3600


def config(tmp_path: Path) -> Path:
    entry = stdio_server_config("bulk", "bulk", default_tool_meta={"auto_apply": True})
    return write_config(tmp_path / "computer.json", [entry])


def victim_with_old_files(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    for name in ("notes.txt", "backup.part"):
        (victim / name).write_text(name)
        os.utime(victim / name, (HOURS_AGO, HOURS_AGO))
    return victim


async def test_links_are_never_followed_and_refusals_name_no_path(
    procs: Any, tmp_path: Path
) -> None:
    victim = victim_with_old_files(tmp_path)
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / ".a2c-partial").symlink_to(victim)  # before the start: the sweep meets it
    (landing / "report.txt").symlink_to(victim / "notes.txt")  # a name an upload asks for
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config(tmp_path), server_url=server.url,
                         office="links", name="box", track=procs.track,
                         extra_args=["--landing-dir", str(landing)]) as computer,
        AsyncAgent(server.url, name="uploader") as agent,
    ):  # fmt: skip
        await computer.wait_for_log("joined office", timeout=120)
        await agent.join_office("links")
        # The old files behind the link survived the start's sweep; the link itself is gone.
        assert sorted(p.name for p in victim.iterdir()) == ["backup.part", "notes.txt"]
        assert "a link in place of the partial dir" in computer.logs()
        # An upload under the linked name lands beside it, never through it.
        landed = await agent.put_blob("box", b"uploaded", name_hint="report.txt")
        assert landed.landing_path == str(landing.resolve() / "report-2.txt")
        assert (victim / "notes.txt").read_text() == "notes.txt"
        # A partial-dir link planted while it runs: the upload is refused, nothing written.
        (landing / ".a2c-partial").symlink_to(victim)
        with pytest.raises(BlobWriteError) as refused:
            await agent.put_blob("box", b"more", name_hint="more.bin")
        assert refused.value.reason == "io_error" and str(tmp_path) not in refused.value.message
        assert sorted(p.name for p in victim.iterdir()) == ["backup.part", "notes.txt"]
        assert (victim / "notes.txt").read_text() == "notes.txt"
        # The dir goes away under the running Computer: forbidden, and no local path.
        for entry in landing.iterdir():
            entry.unlink()
        landing.rmdir()
        with pytest.raises(BlobWriteError) as gone:
            await agent.put_blob("box", b"x", name_hint="x.bin")
        assert gone.value.reason == "forbidden"
        assert str(tmp_path) not in str(gone.value) and str(tmp_path) not in str(gone.value.details)


async def test_a_missing_landing_dir_fails_the_start(procs: Any, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    child = await asyncio.create_subprocess_exec(
        bin_path("a2c-computer"), "run", "--config", str(config(tmp_path)),
        "--server", "http://127.0.0.1:9", "--office", "o", "--name", "box",
        "--wait-server", "0", "--landing-dir", str(missing),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode == 2, err
    assert f"landing dir {missing} does not exist" in err.decode()
    assert "bulk" not in err.decode()  # failed before any MCP server was started
    assert not missing.exists()  # never created


async def test_the_budget_counts_files_per_agent_and_retention_cleans(
    procs: Any, tmp_path: Path
) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    old = landing / "stale.bin"
    old.write_bytes(b"old")
    os.utime(old, (HOURS_AGO, HOURS_AGO))
    args = ["--landing-dir", str(landing), "--landing-max-files", "3",
            "--landing-agent-max-files", "2", "--landing-retention", "2h"]  # fmt: skip
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config(tmp_path), server_url=server.url,
                         office="budget", name="box", track=procs.track,
                         extra_args=args) as computer,
    ):  # fmt: skip
        await computer.wait_for_log("joined office", timeout=120)
        assert not old.exists()  # retention (2 h) at the start removed the 3 h old file
        async with AsyncAgent(server.url, name="first") as first:
            await first.join_office("budget")
            for name in ("one.bin", "two.bin"):
                await first.put_blob("box", name.encode(), name_hint=name)
            with pytest.raises(BlobWriteError) as refused:  # its two files are landed
                await first.put_blob("box", b"three", name_hint="three.bin")
        assert refused.value.reason == "too_large"
        assert refused.value.details is not None
        assert refused.value.details["limit"] == "agent_files"
        # The next Agent in the office's seat has room of its own, up to the dir's 3 files.
        async with AsyncAgent(server.url, name="second") as second:
            await second.join_office("budget")
            await second.put_blob("box", b"a", name_hint="a.bin")
            with pytest.raises(BlobWriteError) as full:
                await second.put_blob("box", b"b", name_hint="b.bin")
        assert full.value.details is not None and full.value.details["limit"] == "files"
        assert "holds 3 files, its limit is 3" in full.value.message
