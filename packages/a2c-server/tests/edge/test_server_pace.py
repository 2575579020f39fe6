"""Waiting for a pacing turn on a real uvicorn: a turn per address, and a shutdown answer.

Pacing is switched on by counting refusals into the Server's own pacer (what the cheap
refusal path does), at one handshake a second so a second handshake has to wait.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from a2c_protocol import PROTOCOL_VERSION
from a2c_server import ServerSettings
from a2c_testkit import RunningServer, running_server
from a2c_testkit.rawws import RawWs


def flooded(srv: RunningServer) -> None:
    pacer = srv.app.sio.handshake_pacer
    for _ in range(30):
        pacer.refused(asyncio.get_running_loop().time())


def handshake(srv: RunningServer) -> str:
    return f"{srv.url}/{srv.socketio_path}/?EIO=4&transport=polling&a2c_version={PROTOCOL_VERSION}"


async def test_pace_a_waiting_handshake_of_another_address_starts_first() -> None:
    async with (
        running_server(ServerSettings(handshake_pace=1, forwarded_allow_ips="127.0.0.1")) as srv,
        httpx.AsyncClient(timeout=30) as http,
    ):
        flooded(srv)
        assert (await http.get(handshake(srv))).status_code == 200  # the free turn
        pacer = srv.app.handshake_turns.pacer
        # Three from one address (X-Forwarded-For, 127.0.0.1 named as a proxy), then
        # one from another: turns at +1 s (flood), +2 s (the other), +3 s, +4 s (flood).
        flood = [asyncio.create_task(http.get(handshake(srv),
                                              headers={"X-Forwarded-For": "203.0.113.7"}))
                 for _ in range(3)]  # fmt: skip
        while pacer.waiting < 3:
            await asyncio.sleep(0.01)
        other = await http.get(handshake(srv), headers={"X-Forwarded-For": "203.0.113.8"})
        assert other.status_code == 200
        assert sum(1 for t in flood if t.done()) <= 1, "the other address waited behind them"
        assert pacer.waiting == 2
        for task in flood:
            assert (await task).status_code == 200
        assert pacer.paced == 4 and pacer.shed == 0


async def test_pace_handshakes_waiting_at_shutdown_are_answered_busy() -> None:
    # A waiting WebSocket upgrade is no open HTTP request: uvicorn used to cancel it at
    # exit (an ERROR and a traceback each). It is closed before accept instead (1013,
    # which uvicorn sends as 403), long before its turn (2 s away at 0.5 a second).
    async with (
        running_server(ServerSettings(handshake_pace=0.5)) as srv,
        httpx.AsyncClient(timeout=30) as http,
    ):
        flooded(srv)
        assert (await http.get(handshake(srv))).status_code == 200  # the free turn
        waiting = asyncio.create_task(RawWs.open(srv.port, rcvbuf=None))
        while srv.app.handshake_turns.pacer.waiting < 1:
            await asyncio.sleep(0.01)
        await srv.app.end_requests()
        with pytest.raises(ConnectionError, match=" 403 "):
            await waiting
        assert srv.app.handshake_turns.pacer.waiting == 0
        assert srv.app.handshake_turns.pacer.shed == 1
