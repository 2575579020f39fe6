"""The token of a Computer expires while it runs a tool call.

The Server keeps the Computer until the call has ended: the answer reaches the Agent, new
requests to that Computer are refused meanwhile (nothing sent, "retry"), then the Server
tells the Computer why (``notify:a2c_session_expired``) and disconnects it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from a2c_protocol import NAMESPACE, Event
from a2c_server import JwksKeys, JwtAuth, ServerSettings
from a2c_testkit.issuer import running_issuer
from a2c_testkit.server import RawClient, connect_raw, running_server

OFFICE = "office-a"
AGENT = {"role": "agent", "name": "alice-agent", "offices": [OFFICE]}
PC = {"role": "computer", "name": "alice-pc", "offices": [OFFICE]}
WAIT = 60.0


def _req(event: Event, req_id: str) -> dict[str, Any]:
    base = {"agent": "alice-agent", "req_id": req_id, "computer": "alice-pc"}
    if event is Event.TOOL_CALL:
        return {**base, "tool_name": "slow", "params": {}, "timeout": 60}
    return base


async def _until_refused(agent: RawClient) -> Any:
    """Ask the Computer for its tools until the Server refuses: once its token expired."""
    for n in range(1000):
        answer: Any = await agent.call(Event.GET_TOOLS, _req(Event.GET_TOOLS, f"t{n}"))
        if "code" in answer:
            return answer
        await asyncio.sleep(0.2)
    raise AssertionError("never refused")


async def test_a_call_in_flight_survives_the_expiry_of_its_computers_token() -> None:
    with running_issuer() as issuer:
        auth = JwtAuth(
            issuer=issuer.issuer, audience=issuer.audience,
            jwks=JwksKeys(issuer.url, min_refresh=0.2), leeway=0,
        )  # fmt: skip
        started, release = asyncio.Event(), asyncio.Event()
        told: asyncio.Queue[object] = asyncio.Queue()

        async def tool_call(data: Any) -> Any:
            started.set()
            await release.wait()
            return {"content": [{"type": "text", "text": "done"}], "isError": False}

        async def get_tools(data: Any) -> Any:
            return {"tools": [], "req_id": data["req_id"]}

        async def expired(data: Any) -> None:
            await told.put(data)

        async with (
            running_server(ServerSettings(), auth=auth) as srv,
            connect_raw(srv, "agent", auth={"token": issuer.token("alice", AGENT)}) as agent,
            connect_raw(srv, "computer",
                        auth={"token": issuer.token("alice", PC, lifetime=8)}) as pc,
        ):  # fmt: skip
            for event, handler in (
                (Event.TOOL_CALL.value, tool_call),
                (Event.GET_TOOLS.value, get_tools),
                ("notify:a2c_session_expired", expired),
            ):
                pc.sio.on(event, handler, namespace=NAMESPACE)
            assert await agent.join("agent", "alice-agent", OFFICE) == (True, None)
            assert await pc.join("computer", "alice-pc", OFFICE) == (True, None)
            call = asyncio.ensure_future(
                agent.call(Event.TOOL_CALL, _req(Event.TOOL_CALL, "r1"), timeout=WAIT)
            )
            await asyncio.wait_for(started.wait(), WAIT)
            refused = await asyncio.wait_for(_until_refused(agent), WAIT)
            assert refused["code"] == 500 and "reconnecting" in refused["message"], refused
            assert refused["details"]["reason"] == "computer_reconnecting"
            assert told.empty() and pc.sio.connected
            release.set()
            answer: Any = await asyncio.wait_for(call, WAIT)
            assert answer["content"][0]["text"] == "done", answer
            # Only now: the reason, then the cut (the office is told the Computer left).
            assert await asyncio.wait_for(told.get(), WAIT) == {"reason": "token expired"}
            _, left = await agent.next_notification(Event.NOTIFY_LEAVE_OFFICE, timeout=WAIT)
            assert isinstance(left, dict) and left["computer"] == "alice-pc"
