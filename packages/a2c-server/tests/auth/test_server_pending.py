"""Role-less sessions on a real uvicorn: a join deadline, and a fair per-subject cap.

* A session admitted without ``auth.role`` that never joins is disconnected after
  ``join_timeout`` (it held a session, a place under the subject cap and a ``pending``
  metric slot for ever); one that joined in time, or that gave its role, is not.
* With a shared token every role-less session was the one subject ``token-client``, so
  ``max_connections_per_subject`` capped every official-SDK client of every office
  together. A subject that names no one counts per client address.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack
from typing import Any

import pytest
import socketio

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_server import ServerSettings
from a2c_server._floods._join_deadline import JoinDeadlines
from a2c_server._floods._refusals import RefusalLog
from a2c_testkit.server import RunningServer, connect_raw, running_server
from a2c_testkit.triangle import eventually

TOKEN = "t" * 32


async def test_pending_a_roleless_session_that_never_joins_is_closed_at_its_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="a2c_server.namespace")
    async with running_server(ServerSettings(join_timeout=1.0)) as srv, AsyncExitStack() as st:
        # Connected first, so their deadlines (had they one) pass before the idler's.
        joined = await st.enter_async_context(connect_raw(srv, None))
        assert await joined.join("agent", "a1", "o1") == (True, None)
        declared = await st.enter_async_context(connect_raw(srv, "computer"))
        idler = await st.enter_async_context(connect_raw(srv, None))
        await eventually(lambda: not idler.sio.connected, timeout=30, what="the idler cut")
        assert joined.sio.connected and declared.sio.connected
        assert srv.app.sio.refusals.counts.get("join_deadline") == 1
        lines = [r.getMessage() for r in caplog.records if "join_office in time" in r.getMessage()]
        assert len(lines) == 1 and "timeout=1.0" in lines[0], lines
        assert "peer=127.0.0.1" in lines[0]


async def test_pending_join_timeout_zero_means_no_deadline() -> None:
    closed: list[str] = []

    async def close(sid: str) -> None:
        closed.append(sid)

    refusals = RefusalLog(logging.getLogger("test"))
    off = JoinDeadlines(0, refusals, close)
    off.arm("s1", None)
    on = JoinDeadlines(0.01, refusals, close)
    on.arm("s2", None)
    on.arm("s3", None)
    on.settled("s3")  # joined in time
    await eventually(lambda: closed == ["s2"], timeout=30, what="s2 closed")
    assert refusals.counts == {"join_deadline": 1}
    assert off._timers == {} and on._timers == {}


async def connect_from(srv: RunningServer, address: str | None) -> Any:
    """A role-less client with the token, seen from ``address`` (X-Forwarded-For, which
    uvicorn trusts from 127.0.0.1); the connect_error data when it was refused."""
    errors: list[Any] = []
    sio = socketio.AsyncClient(reconnection=False)
    sio.on("connect_error", errors.append, namespace=NAMESPACE)
    headers = {"X-Forwarded-For": address} if address else {}
    try:
        await sio.connect(f"{srv.url}?a2c_version={PROTOCOL_VERSION}", namespaces=[NAMESPACE],
                          auth={"token": TOKEN}, headers=headers, transports=["websocket"],
                          wait_timeout=30)  # fmt: skip
    except socketio.exceptions.ConnectionError:
        await sio.shutdown()
        return errors[0]["data"] if errors else "refused without a connect_error"
    return sio


async def test_pending_a_shared_token_subject_is_capped_per_client_address() -> None:
    settings = ServerSettings(auth_token=TOKEN, max_connections_per_subject=2)
    async with running_server(settings) as srv:
        held = [await connect_from(srv, "203.0.113.1") for _ in range(2)]
        assert all(isinstance(c, socketio.AsyncClient) for c in held), held
        # Another office's client on another host is not counted with them.
        other = await connect_from(srv, "203.0.113.2")
        assert isinstance(other, socketio.AsyncClient), other
        # The first host is at its cap: refused, and told that the cap is per address.
        assert await connect_from(srv, "203.0.113.1") == {
            "code": 429,
            "message": "Too many connections: this identity may hold 2 from one address",
        }
        for client in [*held, other]:
            await client.shutdown()
        # Once they left, the host may connect again.
        again = await connect_from(srv, "203.0.113.1")
        assert isinstance(again, socketio.AsyncClient), again
        await again.shutdown()
        await asyncio.sleep(0)
