"""Uploads with the official SDK 0.4.2, its real code in a throwaway venv.

The official Agent uploads to our ``a2c-computer run --landing-dir`` through our Server
(which serves 0.2 and 0.4 sessions side by side); the upload's shapes are the same on both
lines, so our 0.2 Computer, which announced the ``put_blob`` extension, takes it as is.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.official import official_venv, run_official, start_official
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config

MB = 1024 * 1024

# The official Agent, used as its README shows (its default auth provider sends no role).
OFFICIAL_PUT = """
import asyncio, sys
from a2c_smcp.agent.auth import DefaultAgentAuthProvider
from a2c_smcp.agent.client import AsyncSMCPAgentClient

async def main(url, office, computer, path):
    auth = DefaultAgentAuthProvider(agent_id="official", office_id=office)
    client = AsyncSMCPAgentClient(auth_provider=auth)
    await client.connect_to_server(url)
    await client.join_office(office, "official", namespace="/smcp")
    for _ in range(600):  # its join has no ack: wait until the office lists the Computer
        try:
            if any(s.get("name") == computer for s in await client.get_computers_in_office(office)):
                break
        except Exception:
            pass
        await asyncio.sleep(0.1)
    with open(path, "rb") as f:
        data = f.read()
    try:
        landed = await client.put_blob(computer, data, name_hint="from-official.bin")
        print("LANDED", landed.landing_path, landed.total_size, landed.sha256, flush=True)
    except Exception as exc:
        print("REFUSED", type(exc).__name__, getattr(exc, "reason", None), exc, flush=True)
    await client.disconnect()

asyncio.run(main(*sys.argv[1:]))
"""


# The official Computer, given its landing root in a ``--settings``-style flag file.
OFFICIAL_COMPUTER = """
import asyncio, sys, pathlib
from a2c_smcp.computer.computer import Computer
from a2c_smcp.computer.socketio.client import SMCPComputerClient

async def main(url, office, settings):
    computer = Computer(name="offbox", mcp_servers=set(),
                        flag_settings_path=pathlib.Path(settings))
    async with computer:
        client = SMCPComputerClient(computer=computer)
        await client.connect(url, namespaces=["/smcp"])
        await client.join_office(office)
        print("JOINED", computer.landing_root, flush=True)
        await asyncio.Event().wait()

asyncio.run(main(*sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def official_042() -> Path:
    return official_venv("0.4.2")


@pytest.fixture(scope="module")
def official_042_computer() -> Path:
    """The official venv holds the Computer too (the harness installs its ``cli`` extra)."""
    return official_venv("0.4.2")


def config(tmp_path: Path) -> Path:
    entry = stdio_server_config("bulk", "bulk", default_tool_meta={"auto_apply": True})
    return write_config(tmp_path / "computer.json", [entry])


async def test_the_official_0_4_2_agent_uploads_to_our_computer(
    procs: Any, tmp_path: Path, official_042: Path
) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    source = tmp_path / "file.bin"
    source.write_bytes(os.urandom(3 * MB + 5))
    small = tmp_path / "small.bin"
    small.write_bytes(b"x" * 4096)
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config(tmp_path), server_url=server.url,
                         office="o1", name="box", track=procs.track,
                         extra_args=["--landing-dir", str(landing),
                                     "--landing-max-bytes", str(4 * MB)]) as computer,
    ):  # fmt: skip
        await computer.wait_for_log("joined office", timeout=120)
        run = await asyncio.to_thread(
            run_official, official_042, OFFICIAL_PUT, server.url, "o1", "box", str(source),
            timeout=300,
        )  # fmt: skip
        words = run.check().split("LANDED ", 1)[1].split()
        landed = Path(words[0])
        assert landed == landing.resolve() / "from-official.bin"
        assert hashlib.sha256(landed.read_bytes()).hexdigest() == words[2]
        assert landed.read_bytes() == source.read_bytes()
        # Over our limit: the official Agent gets 4019 too_large, and nothing lands.
        big = tmp_path / "big.bin"
        big.write_bytes(b"y" * (5 * MB))
        run = await asyncio.to_thread(
            run_official, official_042, OFFICIAL_PUT, server.url, "o1", "box", str(big),
            timeout=300,
        )  # fmt: skip
        assert "REFUSED" in run.check() and "too_large" in run.stdout
        assert sorted(p.name for p in landing.iterdir()) == ["from-official.bin"]


async def test_our_agent_uploads_to_the_official_0_4_2_computer(
    procs: Any, tmp_path: Path, official_042_computer: Path
) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"landingRoot": str(landing)}))
    data = os.urandom(MB + 3)
    async with server_process(procs.log_dir, track=procs.track) as server:
        official = start_official(official_042_computer, OFFICIAL_COMPUTER, server.url, "o1",
                                  str(settings), log_path=procs.log_dir / "official-computer.log")  # fmt: skip
        try:
            await eventually(lambda: "JOINED" in official.output(), timeout=180,
                             what="official computer joined")  # fmt: skip
            async with AsyncAgent(server.url, name="planner") as agent:
                await agent.join_office("o1")
                landed = await agent.put_blob("offbox", data, name_hint="ours.bin")
        finally:
            official.stop()
    assert Path(landed.landing_path).parent == landing.resolve()
    assert Path(landed.landing_path).read_bytes() == data
    assert landed.sha256 == hashlib.sha256(data).hexdigest()


async def test_the_official_0_4_2_agent_uploads_to_the_official_0_4_2_computer(
    procs: Any, tmp_path: Path, official_042: Path
) -> None:
    """Both ends official, our Server between them: put_blob is relayed like every
    client:* request, chunk by chunk, and lands byte-identical."""
    landing = tmp_path / "landing"
    landing.mkdir()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"landingRoot": str(landing)}))
    source = tmp_path / "file.bin"
    source.write_bytes(os.urandom(MB + 7))
    async with server_process(procs.log_dir, track=procs.track) as server:
        official = start_official(official_042, OFFICIAL_COMPUTER, server.url, "o1",
                                  str(settings), log_path=procs.log_dir / "official-computer.log")  # fmt: skip
        try:
            await eventually(lambda: "JOINED" in official.output(), timeout=180,
                             what="official computer joined")  # fmt: skip
            run = await asyncio.to_thread(
                run_official, official_042, OFFICIAL_PUT, server.url, "o1", "offbox",
                str(source), timeout=300,
            )  # fmt: skip
        finally:
            official.stop()
    landed = Path(run.check().split("LANDED ", 1)[1].split()[0])
    assert landed.parent == landing.resolve()
    assert landed.read_bytes() == source.read_bytes()
