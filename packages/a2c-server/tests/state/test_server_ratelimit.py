"""Rate limits per identity: a token bucket per session and a cap on the
sessions one subject holds; a client over its limit gets 429 and costs others nothing."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest

from a2c_protocol import Event
from a2c_server import AuthRequest, Identity, ServerSettings
from a2c_server._state._ratelimit import TokenBucket
from a2c_testkit.server import RunningServer, connect_raw, joined_raw, running_server

LIMIT = "Too many requests: this session may send 2 per second"


@pytest.fixture
def settings() -> ServerSettings:
    return ServerSettings(max_requests_per_second=2, request_burst=5, tool_call_buffer=0.5)


def test_ratelimit_token_bucket() -> None:
    bucket = TokenBucket(rate=2, burst=3, now=0.0)
    assert [bucket.take(0.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.take(0.5) and not bucket.take(0.5)  # one token back after 1/rate s
    assert [bucket.take(100.0) for _ in range(4)] == [True, True, True, False]  # capped


async def test_ratelimit_flooding_session_gets_429_and_others_are_served(
    server: RunningServer,
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        for office, name in (("o-a", "pc-a"), ("o-b", "pc-b")):
            pc = await joined_raw(stack, server.next_node(), "computer", name, office)
            pc.sio.on("client:get_tools", lambda data: {"tools": [], "req_id": data["req_id"]},
                      namespace="/smcp")  # fmt: skip
        flooder = await joined_raw(stack, server.next_node(), "agent", "flooder", "o-a")
        calm = await joined_raw(stack, server.next_node(), "agent", "calm", "o-b")

        def ask(agent_name: str, computer: str, i: int) -> dict[str, str]:
            return {"agent": agent_name, "computer": computer, "req_id": f"{agent_name}{i}"}

        answers = await asyncio.gather(
            *(flooder.call(Event.GET_TOOLS, ask("flooder", "pc-a", i)) for i in range(60))
        )
        refused = [a for a in answers if isinstance(a, dict) and a.get("code") == 429]
        served = [a for a in answers if isinstance(a, dict) and "tools" in a]
        assert len(refused) + len(served) == 60
        assert refused and refused[0] == {"code": 429, "message": LIMIT}
        # The burst (5) less the join it spent, plus what refilled meanwhile.
        assert 4 <= len(served) <= 15
        # The other office's Agent has its own budget (the burst less its join): every
        # request answered, none slowed by the flood.
        for i in range(4):
            assert await calm.call(Event.GET_TOOLS, ask("calm", "pc-b", i)) == {
                "tools": [],
                "req_id": f"calm{i}",
            }
        # Still over its rate, a join is refused in the join's own shape.
        for _ in range(20):
            ack = await flooder.join("agent", "flooder", "o-a")
            if ack != (True, None):
                assert ack == (False, LIMIT)
                break
        else:
            raise AssertionError("the join was never limited")
    async with httpx.AsyncClient() as http:
        text = "".join(
            [(await http.get(f"{n.url}/metrics")).text for n in server.nodes or (server,)]
        )
    assert 'a2c_server_rate_limited_total{event="client:get_tools"}' in text


class _BySubject:
    async def authenticate(self, request: AuthRequest) -> Identity:
        return Identity(subject=str(request.auth.get("token")))


async def test_ratelimit_connections_per_subject() -> None:
    settings = ServerSettings(max_connections_per_subject=2)
    async with running_server(settings, auth=_BySubject()) as srv:
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(2):
                await stack.enter_async_context(connect_raw(srv, "agent", auth={"token": "u1"}))
            other = await stack.enter_async_context(connect_raw(srv, "agent", auth={"token": "u2"}))
            assert other.sio.connected
            import socketio

            errors: list[object] = []
            sio = socketio.AsyncClient(reconnection=False)
            sio.on("connect_error", errors.append, namespace="/smcp")
            with pytest.raises(socketio.exceptions.ConnectionError):
                await sio.connect(
                    f"{srv.url}?a2c_version=0.2.0", namespaces=["/smcp"],
                    auth={"role": "agent", "token": "u1"}, transports=["websocket"],
                    wait_timeout=30,
                )  # fmt: skip
            await sio.shutdown()
            assert errors and errors[0]["data"] == {  # type: ignore[index]
                "code": 429,
                "message": "Too many connections: this identity may hold 2",
            }
        # Once they left, the subject may connect again.
        async with connect_raw(srv, "agent", auth={"token": "u1"}) as again:
            assert again.sio.connected
