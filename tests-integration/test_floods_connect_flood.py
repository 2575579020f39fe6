"""A tokenless connect flood with an honest Agent and Computer calling throughout.

A real ``a2c-server`` with a shared token; an Agent and a Computer holding it make tool
calls while lanes of connects without a token or with a wrong one hammer the Server over
long-polling and over WebSocket for a few seconds. Every honest call is answered, every
flooding connect is refused with the documented 401, and the log grows by a few folded
lines instead of one WARNING (and one audit line) per refusal. How fast the honest calls
are during the flood is measured by ``tools/bench/bench_connect_flood.py``, not here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import uuid
from typing import Any

import httpx
import pytest
import socketio

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_testkit.rawws import RawWs
from a2c_testkit.triangle import server_process

pytestmark = pytest.mark.asyncio

TOKEN = "s3cret-token-for-the-connect-flood-test"
FLOOD_SECONDS = 4.0
REPLY = {"content": [{"type": "text", "text": "ok"}], "isError": False}


def bad_auth(n: int) -> str:
    return '{"role":"agent"}' if n % 2 else '{"role":"agent","token":"wrong"}'


async def polling_lane(http: httpx.AsyncClient, url: str, stop: asyncio.Event,
                       answers: list[str]) -> None:  # fmt: skip
    base = f"{url}/socket.io/?EIO=4&transport=polling"
    while not stop.is_set():
        opened = await http.get(f"{base}&a2c_version={PROTOCOL_VERSION}")
        sid = json.loads(opened.text[1:])["sid"]
        body = f"40{NAMESPACE},{bad_auth(len(answers))}".encode()
        await http.post(f"{base}&sid={sid}", content=body)
        answers.append((await http.get(f"{base}&sid={sid}")).text)


async def websocket_lane(port: int, stop: asyncio.Event, answers: list[str]) -> None:
    while not stop.is_set():
        ws = await RawWs.open(port, rcvbuf=None)
        try:
            ws.send(f"40{NAMESPACE},{bad_auth(len(answers))}")
            answers.append(await ws.recv_until((f"40{NAMESPACE},", f"44{NAMESPACE},")))
        finally:
            ws.close()


async def honest(url: str, role: str, name: str) -> socketio.AsyncClient:
    client = socketio.AsyncClient(reconnection=False)
    if role == "computer":

        @client.on("client:tool_call", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
        async def answer(data: dict[str, Any]) -> dict[str, Any]:
            return REPLY

    await client.connect(f"{url}?a2c_version={PROTOCOL_VERSION}",
                         auth={"role": role, "token": TOKEN}, namespaces=[NAMESPACE],
                         transports=["websocket"], wait_timeout=30)  # fmt: skip
    joined = await client.call("server:join_office", {"role": role, "name": name,
                               "office_id": "office-h"}, namespace=NAMESPACE, timeout=30)  # fmt: skip
    assert joined[0] is True, joined
    return client


async def test_honest_calls_are_served_and_the_log_stays_small_under_a_connect_flood(
    procs: Any,
) -> None:
    async with (
        server_process(procs.log_dir, extra_args=["--auth-token", TOKEN],
                       track=procs.track) as server,
        httpx.AsyncClient(timeout=30) as http,
    ):  # fmt: skip
        computer = await honest(server.url, "computer", "box-h")
        agent = await honest(server.url, "agent", "agent-h")
        log_path = server.process.log_path
        before = log_path.stat().st_size
        stop = asyncio.Event()
        answers: list[str] = []
        lanes = [asyncio.create_task(polling_lane(http, server.url, stop, answers))
                 for _ in range(3)]  # fmt: skip
        lanes += [asyncio.create_task(websocket_lane(server.port, stop, answers))
                  for _ in range(3)]  # fmt: skip
        calls = 0
        slowest = 0.0
        try:
            end = time.monotonic() + FLOOD_SECONDS
            while time.monotonic() < end or calls < 5:
                started = time.monotonic()
                result = await agent.call("client:tool_call", {
                    "agent": "agent-h", "req_id": uuid.uuid4().hex, "computer": "box-h",
                    "tool_name": "echo", "params": {}, "timeout": 30,
                }, namespace=NAMESPACE, timeout=60)  # fmt: skip
                assert result == REPLY, result  # every honest call is answered, in full
                slowest = max(slowest, time.monotonic() - started)
                calls += 1
        finally:
            stop.set()
            await asyncio.gather(*lanes)
        with contextlib.suppress(Exception):
            await agent.disconnect()
            await computer.disconnect()
        grown = log_path.stat().st_size - before
        assert len(answers) >= 200, f"only {len(answers)} flooding connects were made"
        # What a refused client sees is unchanged: the flat 401 in its connect_error.
        for answer in answers:
            # A polling answer may carry more packets after it (\x1e-separated).
            packet = answer.split("\x1e")[0]
            assert packet.startswith(f"44{NAMESPACE},"), answer
            refusal = json.loads(packet.split(",", 1)[1])["data"]
            assert refusal["code"] == 401, answer
            assert refusal["message"].startswith("Authentication failed"), answer
        metrics = (await http.get(f"{server.url}/metrics")).text
        found = re.search(r'^a2c_server_refusals_total\{cause="unauthorized"\} (\S+)$', metrics,
                          re.M)  # fmt: skip
        assert found and float(found.group(1)) == len(answers)  # each one counted
        # Refused in numbers, new handshakes were paced (the honest pair's never are).
        paced = re.search(r"^a2c_server_handshakes_paced_total (\S+)$", metrics, re.M)
        assert paced and float(paced.group(1)) > 0, "new handshakes were never paced"
        # One WARNING per cause and address per 10 s, not one (~0.5 KB) per refusal.
        assert grown < 20_000, f"the log grew {grown} bytes for {len(answers)} refusals"
        assert slowest < 20.0  # generous: the machine is shared; the bench measures latency
        log = server.process.logs()
        assert "Traceback" not in log
        assert "authentication failed" in log  # the cause is still named
