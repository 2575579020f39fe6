"""Uploads between our roles: ``a2c-agent put`` / ``AsyncAgent.put_blob`` through
``a2c-server`` to ``a2c-computer run --landing-dir``, every process real."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent, Landed, SyncAgent
from a2c_protocol import NAMESPACE, BlobWriteError, Event
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.processes import bin_path, spawn
from a2c_testkit.scripted_computer import ScriptedComputer
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config

MB = 1024 * 1024


def config(tmp_path: Path) -> Path:
    entry = stdio_server_config("bulk", "bulk", default_tool_meta={"auto_apply": True})
    return write_config(tmp_path / "computer.json", [entry])


@contextlib.asynccontextmanager
async def office_with_computer(
    procs: Any, tmp_path: Path, computer_args: Sequence[str]
) -> AsyncIterator[tuple[str, str]]:
    """Server + ``a2c-computer run`` "box" joined; yields (server url, office)."""
    office = "uploads"
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config(tmp_path), server_url=server.url,
                         office=office, name="box", track=procs.track,
                         extra_args=computer_args) as computer,
    ):  # fmt: skip
        await computer.wait_for_log("joined office", timeout=120)
        yield server.url, office


def landed_files(landing: Path) -> list[str]:
    # os.walk, not Path.rglob: the Computer removes its emptied partial dir while we look,
    # and rglob raises when a directory it listed is gone by the time it descends into it.
    return sorted(name for _, dirs, files in os.walk(landing) for name in (*dirs, *files))


async def run_cli(*argv: str) -> tuple[int, str, str]:
    child = await asyncio.create_subprocess_exec(
        bin_path("a2c-agent"), *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(child.communicate(), 180)
    assert child.returncode is not None
    return child.returncode, out.decode(), err.decode()


async def test_a2c_agent_put_lands_a_byte_identical_file(procs: Any, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    source = tmp_path / "file.bin"
    source.write_bytes(os.urandom(3 * MB + 17))
    async with office_with_computer(procs, tmp_path, ["--landing-dir", str(landing)]) as (
        url,
        office,
    ):
        code, out, err = await run_cli("--server", url, "--office", office, "--table",
                                       "put", "box", str(source))  # fmt: skip
        assert code == 0, err
        landed = Path(out.strip())
        assert landed == landing.resolve() / "file.bin"
        assert (
            hashlib.sha256(landed.read_bytes()).digest()
            == hashlib.sha256(source.read_bytes()).digest()
        )
        # The same name again never overwrites: a second file, and the JSON form.
        code, out, err = await run_cli("--server", url, "--office", office, "--json",
                                       "put", "box", str(source), "--name", "file.bin")  # fmt: skip
        assert code == 0, err
        assert '"landing_path": "' + str(landing.resolve() / "file-2.bin") + '"' in out
        assert landed_files(landing) == ["file-2.bin", "file.bin"]
        # SyncAgent, from plain blocking code (its own loop thread), with a progress callback.
        sent: list[tuple[int, int]] = []

        def blocking_upload() -> Landed:
            with SyncAgent(url, name="sync-uploader") as agent:
                agent.join_office(office)
                landed: Landed = agent.put_blob(
                    "box", source, name_hint="sync.bin", progress=lambda n, t: sent.append((n, t))
                )
                return landed

        landed_sync = await asyncio.to_thread(blocking_upload)
        assert landed_sync.landing_path == str(landing.resolve() / "sync.bin")
        assert (landed_sync.total_size, sent[-1]) == (3 * MB + 17, (3 * MB + 17, 3 * MB + 17))
        assert (landing / "sync.bin").read_bytes() == source.read_bytes()


async def test_over_the_limit_is_refused_before_a_byte_lands(procs: Any, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    big = tmp_path / "big.bin"
    with big.open("wb") as f:  # sparse: 200 MB declared without writing them
        f.truncate(200 * MB)
    async with (
        office_with_computer(procs, tmp_path, ["--landing-dir", str(landing),
                                               "--landing-max-bytes", str(10 * MB)]) as (url, office),
        AsyncAgent(url, name="sdk") as agent,
    ):  # fmt: skip
        await agent.join_office(office)
        with pytest.raises(BlobWriteError) as refused:
            await agent.put_blob("box", big)
        assert refused.value.reason == "too_large"
        assert landed_files(landing) == []


async def test_without_a_landing_dir_uploads_are_forbidden(procs: Any, tmp_path: Path) -> None:
    async with (
        office_with_computer(procs, tmp_path, []) as (url, office),
        AsyncAgent(url, name="sdk") as agent,
    ):
        await agent.join_office(office)
        with pytest.raises(BlobWriteError) as refused:
            await agent.put_blob("box", b"hello")
        assert refused.value.reason == "forbidden"


async def test_an_interrupted_upload_leaves_nothing(procs: Any, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    source = tmp_path / "slow.bin"
    source.write_bytes(os.urandom(60 * MB))
    async with office_with_computer(procs, tmp_path, ["--landing-dir", str(landing)]) as (
        url,
        office,
    ):
        argv = [bin_path("a2c-agent"), "--server", url, "--office", office, "put", "box",
                str(source)]  # fmt: skip
        async with spawn("agent-put", argv, log_dir=procs.log_dir) as agent:
            await eventually(lambda: any(n.endswith(".part") for n in landed_files(landing)), timeout=120,
                             what="a partial upload")  # fmt: skip
            agent.kill()
        # The Agent's departure drops its upload: nothing under the landing dir at all.
        await eventually(lambda: landed_files(landing) == [], timeout=60, what="nothing left")


async def test_a_computer_that_does_not_announce_uploads_gets_none(
    procs: Any, tmp_path: Path
) -> None:
    seen: dict[str, list[Any]] = {"old": [], "new": []}

    def recorder(name: str) -> Any:
        def record(payload: Any) -> Any:
            seen[name].append(payload)
            return {"upload_id": "u1", "chunk_offset": 0, "req_id": payload["req_id"],
                    "landing_path": "/landing/x", "total_size": 5,
                    "sha256": hashlib.sha256(b"hello").hexdigest()}  # fmt: skip

        return record

    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        ScriptedComputer(server.url, name="old", office_id="o1") as old,
        ScriptedComputer(server.url, name="new", office_id="o1",
                         auth={"a2c_extensions": ["put_blob"]}) as new,
        AsyncAgent(server.url, name="sdk") as agent,
    ):  # fmt: skip
        for computer in (old, new):
            computer.sio.on(Event.PUT_BLOB.value, recorder(computer.name), namespace=NAMESPACE)
        await agent.join_office("o1")
        with pytest.raises(BlobWriteError) as refused:
            await agent.put_blob("old", b"hello")
        assert refused.value.reason == "forbidden"
        assert "does not take uploads" in refused.value.message
        landed = await agent.put_blob("new", b"hello", name_hint="x")
        assert landed.landing_path == "/landing/x"
        assert seen["old"] == [] and len(seen["new"]) == 1


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX process groups")
