"""Fuzz the real ``a2c-server`` process with malformed traffic.

A seeded generator sends well over 500 malformed payloads, across every event name of the
protocol plus reserved and unknown names, over polling and over websocket, plus raw
Engine.IO garbage. Afterwards: the process is alive, ``/healthz?deep=1`` says the registry
matches the Socket.IO rooms, its log has no ERROR line and no traceback, and a legitimate
Agent and Computer still work.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx
import socketio

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION, Event, is_error_payload
from a2c_testkit.server import close_client
from a2c_testkit.triangle import server_process

RESERVED = ["connect", "disconnect", "connect_error", "disconnecting", "newListener"]
UNKNOWN = ["client:nope", "server:nope", "message", "notify:x", "", "x" * 500]
NAMES = [e.value for e in Event] + RESERVED + UNKNOWN
ID_KEYS = ["agent", "computer", "req_id", "office_id", "name", "role", "tool_name", "timeout",
           "params", "mcp_server", "desktop_size", "window"]  # fmt: skip
PER_TRANSPORT = 300


def value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(10)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False, 0, -1, 2**70, 1.5, -0.0])
    if kind == 2:
        return "".join(
            rng.choice("ab:/\\\"'\u00e9\u4e2d\U0001f600 ") for _ in range(rng.randrange(8))
        )
    if kind == 3:
        return "r" * rng.choice([257, 5_000, 60_000])
    if kind == 4 and depth < 3:
        return [value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 5:
        nested: Any = "deep"
        for _ in range(rng.choice([65, 120, 180])):
            nested = [nested] if rng.random() < 0.5 else {"k": nested}
        return nested
    if depth < 3:
        return {rng.choice(ID_KEYS): value(rng, depth + 1) for _ in range(rng.randrange(5))}
    return "leaf"


def payload(rng: random.Random) -> Any:
    if rng.random() < 0.15:
        return tuple(value(rng) for _ in range(rng.randrange(2, 4)))  # several arguments
    base: dict[str, Any] = {"agent": "a1", "computer": "c1", "req_id": "r", "office_id": "o1",
                            "name": "fz", "role": "agent", "tool_name": "t", "params": {},
                            "timeout": 5}  # fmt: skip
    if rng.random() < 0.5:
        for key in rng.sample(sorted(base), rng.randrange(1, 4)):
            base[key] = value(rng)
        return base
    return value(rng)


@contextlib.asynccontextmanager
async def client(url: str, role: str, transports: list[str]) -> AsyncIterator[socketio.AsyncClient]:
    sio = socketio.AsyncClient(reconnection=False)
    await sio.connect(
        f"{url}?a2c_version={PROTOCOL_VERSION}", namespaces=[NAMESPACE],
        auth={"role": role}, transports=transports, wait_timeout=30,
    )  # fmt: skip
    try:
        yield sio
    finally:
        await close_client(sio)


async def raw_garbage(url: str, rng: random.Random) -> int:
    """Engine.IO-level garbage over polling: undecodable packets, closed sessions."""
    bodies = [
        "42/smcp," + "[" * 1200 + "]" * 1200,
        '42/smcp,["server:list_room",' + "9" * 5000 + "]",
        "42/smcp," + "9" * 120 + '["server:list_room",{}]',
        "9zz", "4", "40", '40/smcp,{"role":"admin"}', "42/other,[\"x\"]", "",
    ]  # fmt: skip
    sent = 0
    base = f"{url}/socket.io/?EIO=4&transport=polling"
    async with httpx.AsyncClient(timeout=30) as http:
        for _ in range(10):
            opened = await http.get(f"{base}&a2c_version={PROTOCOL_VERSION}")
            sid = json.loads(opened.text[1:])["sid"]
            await http.post(f"{base}&sid={sid}", content=b'40/smcp,{"role":"agent"}')
            await http.get(f"{base}&sid={sid}")
            for body in rng.sample(bodies, 4):
                await http.post(f"{base}&sid={sid}", content=body.encode())
                sent += 1
            await http.post(f"{base}&sid={sid}", content=b"1")
            await http.post(f"{base}&sid={sid}", content=b'42/smcp,["server:list_room",{}]')
            sent += 1
    return sent


async def test_security_fuzz_real_server_process(procs: Any) -> None:
    rng = random.Random(20261202)
    async with server_process(procs.log_dir, track=procs.track) as server:
        url = server.url
        async with (
            client(url, "computer", ["websocket"]) as computer,
            client(url, "agent", ["polling", "websocket"]) as agent,
        ):

            async def answer(data: Any = None) -> dict[str, Any]:
                return {"tools": [], "req_id": "r"}

            for event in Event:
                if event.value.startswith("client:"):
                    computer.on(event.value, answer, namespace=NAMESPACE)
            assert (await computer.call(Event.JOIN_OFFICE.value, {"role": "computer",
                    "name": "c1", "office_id": "o1"}, namespace=NAMESPACE, timeout=30))[0]  # fmt: skip
            assert (await agent.call(Event.JOIN_OFFICE.value, {"role": "agent", "name": "a1",
                    "office_id": "o1"}, namespace=NAMESPACE, timeout=30))[0]  # fmt: skip

            sent = 0
            for transports in (["polling"], ["websocket"]):
                async with (
                    client(url, "agent", transports) as hostile_agent,
                    client(url, "computer", transports) as hostile_computer,
                ):
                    for i in range(PER_TRANSPORT):
                        sio = hostile_agent if i % 2 else hostile_computer
                        name = rng.choice(NAMES)
                        data = payload(rng)
                        if name in RESERVED or name.startswith(("client:", "server:")):
                            reply = await sio.call(name, data, namespace=NAMESPACE, timeout=30)
                            if name in RESERVED:
                                assert is_error_payload(reply), (name, reply)
                        else:
                            await sio.emit(name, data, namespace=NAMESPACE)
                        sent += 1
            sent += await raw_garbage(url, rng)
            assert sent >= 500, sent
            print("fuzz payloads sent:", sent)

            # A legitimate Agent and Computer still work.
            tools = await agent.call(Event.GET_TOOLS.value, {"agent": "a1", "req_id": "ok",
                                     "computer": "c1"}, namespace=NAMESPACE, timeout=30)  # fmt: skip
            assert isinstance(tools, dict) and not is_error_payload(tools), tools
            listed = await agent.call(Event.LIST_ROOM.value, {"agent": "a1", "req_id": "l",
                                      "office_id": "o1"}, namespace=NAMESPACE, timeout=30)  # fmt: skip
            assert sorted(s["name"] for s in listed["sessions"]) == ["a1", "c1"]
            async with httpx.AsyncClient(timeout=30) as http:
                health = (await http.get(f"{url}/healthz?deep=1")).json()
            assert health["registry_matches_rooms"] is True, health
        assert server.process.running
        await asyncio.sleep(0)  # let the last log lines reach the file
        log = server.process.logs()
        bad = [line for line in log.splitlines() if " ERROR " in line or "Traceback" in line]
        assert bad == [], bad[:5]
        assert " WARNING " in log  # the refusals were seen and logged
