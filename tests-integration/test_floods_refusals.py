"""A tokenless connect flood against a real ``a2c-server``: the log stays small.

Every attempt is a real Engine.IO handshake plus a Socket.IO CONNECT without the token
(three HTTP requests); each is refused with 401. Before, every refusal wrote its own
WARNING and audit line and uvicorn an access line per request (~0.5 KB an attempt).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import pytest

from a2c_protocol import PROTOCOL_VERSION
from a2c_testkit.triangle import server_process

pytestmark = pytest.mark.asyncio

ATTEMPTS = 600


async def tokenless_connect(http: httpx.AsyncClient, url: str) -> str:
    base = f"{url}/socket.io/?EIO=4&transport=polling"
    opened = await http.get(f"{base}&a2c_version={PROTOCOL_VERSION}")
    sid = json.loads(opened.text[1:])["sid"]
    await http.post(f"{base}&sid={sid}", content=b'40/smcp,{"role":"agent"}')
    return (await http.get(f"{base}&sid={sid}")).text


async def test_a_tokenless_connect_flood_adds_little_to_the_log(procs: Any) -> None:
    args = ["--auth-token", "s3cret-token-for-the-flood-test"]
    async with (
        server_process(procs.log_dir, extra_args=args, track=procs.track) as server,
        httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=8)) as http,
    ):
        log_path = server.process.log_path
        before = log_path.stat().st_size
        lanes = asyncio.Semaphore(4)

        async def attempt() -> str:
            async with lanes:
                return await tokenless_connect(http, server.url)

        answers = await asyncio.gather(*(attempt() for _ in range(ATTEMPTS)))
        assert all("44/smcp" in a and "401" in a for a in answers)
        metrics = (await http.get(f"{server.url}/metrics")).text
        grown = log_path.stat().st_size - before
        found = re.search(r'^a2c_server_refusals_total\{cause="unauthorized"\} (\S+)$', metrics,
                          re.M)  # fmt: skip
        assert found and float(found.group(1)) == ATTEMPTS
        log = server.process.logs()
        assert grown < 100_000, f"the log grew {grown} bytes for {ATTEMPTS} refused connects"
        assert "authentication failed" in log  # the cause is still named, once per interval
        assert "Traceback" not in log
        print(f"log grew {grown} bytes for {ATTEMPTS} refused connects")
