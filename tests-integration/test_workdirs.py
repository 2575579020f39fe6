"""Spool and staging directories of Computers on one host.

Two Computers with the same ``--name`` used to share one blob key, spool and skill staging
directory, and every Computer name (failed starts included) left its directories behind.
Now each process has its own, a directory given explicitly is refused to a second process,
and every exit (a failed start too) removes what the process created.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from a2c_testkit.processes import ManagedProcess, bin_path, free_port, spawn
from a2c_testkit.triangle import eventually, server_process, write_config


@contextlib.asynccontextmanager
async def computer(
    procs: Any, label: str, config: Path, server: str, *extra: str, office: str | None = None
) -> AsyncIterator[ManagedProcess]:
    office = office or f"office-{uuid.uuid4()}"
    argv = [
        bin_path("a2c-computer"), "-v", "run", "--config", str(config), "--server", server,
        "--office", office, "--name", "box", "--confirm", "deny", *extra,
    ]  # fmt: skip
    async with spawn(f"computer-{label}", argv, log_dir=procs.log_dir) as process:
        procs.track(process)
        yield process


async def exit_code(process: ManagedProcess) -> int | None:
    """The exit code of a process that ends by itself."""
    await eventually(lambda: not process.running, what=f"{process.name} to exit")
    return process.popen.returncode


def entries(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir()) if path.exists() else []


async def test_two_computers_with_one_name_share_nothing_and_leave_nothing(
    procs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, data = tmp_path / "cache", tmp_path / "data"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    blobs = cache / "a2c-computer" / "blobs"
    staged = data / "a2c-computer" / "skills" / "staged"
    shared = tmp_path / "shared-spool"
    config = write_config(tmp_path / "computer.json", [])
    dead = f"http://127.0.0.1:{free_port()}"
    # Same-name Computers on one host, each joined on its own Server.
    office_one = f"office-{uuid.uuid4()}"
    async with (
        server_process(procs.log_dir, track=procs.track, name="server-a") as a,
        server_process(procs.log_dir, track=procs.track, name="server-b") as b,
        server_process(procs.log_dir, track=procs.track, name="server-c") as c,
        computer(procs, "one", config, a.url, office=office_one) as one,
        computer(procs, "two", config, b.url) as two,
        computer(procs, "three", config, c.url, "--blob-spool-dir", str(shared)) as three,
    ):
        for process in (one, two, three):
            await process.wait_for_log("joined office", timeout=60)
        # Same name, own directories: two default spools, three staging directories.
        assert len(entries(blobs)) == 2 and len(entries(staged)) == 3
        assert all(name.startswith("box-") for name in entries(blobs) + entries(staged))
        assert entries(shared) == [".lock", "data", "handle.key"]

        # A second Computer on the given spool is refused before it connects anywhere.
        async with computer(procs, "four", config, dead, "--blob-spool-dir", str(shared)) as four:
            assert await exit_code(four) == 1
        assert f"(pid {three.pid})" in four.logs()
        assert "give each Computer its own --blob-spool-dir" in four.logs()
        assert three.running and entries(shared) == [".lock", "data", "handle.key"]

        # A start that fails after claiming its directories (the Server refuses the
        # name, which "one" holds in its office) removes them again.
        async with computer(procs, "five", config, a.url, office=office_one) as five:
            assert await exit_code(five) == 1
        assert "already taken" in five.logs()
        assert len(entries(blobs)) == 2 and len(entries(staged)) == 3
        for process in (one, two, three):
            assert await process.stop() == 0

    assert entries(blobs) == [] and entries(staged) == []
    assert not shared.exists()
