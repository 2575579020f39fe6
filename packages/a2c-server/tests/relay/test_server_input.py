"""The input extension through the Server: relayed as it is, in pure and mixed offices.

The Server does not interpret input requests (docs/compatibility.md): it checks the three
request keys' JSON types, translates the tool name of a mixed office on every round alike,
and hands the Computer's input-required answer to the Agent unchanged.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import pytest

from a2c_protocol import (
    Event,
    InputCapabilities,
)
from a2c_protocol._input import (
    input_required_answer,
)
from a2c_testkit.server import RawClient, RunningServer, connect_raw

FORM = {"method": "elicitation/create",
        "params": {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object"}}}  # fmt: skip
ASKS = input_required_answer({"q1": FORM}, "state-1", mcp_server="greeter", expires_in=300)


def asking_computer(client: RawClient, seen: list[Any]) -> None:
    @client.sio.on("client:tool_call", namespace="/smcp")  # type: ignore[untyped-decorator]
    async def tool_call(data: Any) -> Any:
        seen.append(data)
        if "a2c_request_state" in data:
            return {"content": [{"type": "text", "text": "hello"}], "isError": False}
        return ASKS


def call(**fields: Any) -> dict[str, Any]:
    return {"agent": "a1", "computer": "c1", "req_id": "r1", "params": {"x": 1}, "timeout": 10,
            "a2c_input": InputCapabilities().to_wire(), **fields}  # fmt: skip


@pytest.mark.parametrize(
    ("agent_version", "computer_version", "asked", "received"),
    [
        ("0.2.3", "0.2.3", "greet", "greet"),
        ("0.2.3", "0.4.2", "g__greet", "g__greet"),
        ("0.4.2", "0.2.3", "a2c-0-2__greet", "greet"),
        ("0.4.2", "0.4.2", "g__greet", "g__greet"),
    ],
)
async def test_server_relays_input_rounds_unchanged(
    server: RunningServer, agent_version: str, computer_version: str, asked: str, received: str
) -> None:
    seen: list[Any] = []
    async with AsyncExitStack() as stack:
        computer = await stack.enter_async_context(
            connect_raw(server, None, a2c_version=computer_version)
        )
        asking_computer(computer, seen)
        assert await computer.join("computer", "c1", "o1") == (True, None)
        agent = await stack.enter_async_context(
            connect_raw(server, None, a2c_version=agent_version)
        )
        assert await agent.join("agent", "a1", "o1") == (True, None)
        first = call(tool_name=asked)
        assert await agent.call(Event.TOOL_CALL, first) == ASKS
        retry = call(tool_name=asked, req_id="r2", a2c_request_state="state-1",
                     a2c_input_responses={"q1": {"action": "accept", "content": {"n": "A"}}})  # fmt: skip
        answer = await agent.call(Event.TOOL_CALL, retry)
        assert answer == {"content": [{"type": "text", "text": "hello"}], "isError": False}
    assert seen == [{**first, "tool_name": received}, {**retry, "tool_name": received}]


@pytest.mark.parametrize(
    ("key", "value"),
    [("a2c_input", "all"), ("a2c_input_responses", {"q1": "yes"}), ("a2c_request_state", 7)],
)
async def test_server_refuses_a_mistyped_input_key_naming_it(
    server: RunningServer, key: str, value: Any
) -> None:
    seen: list[Any] = []
    async with AsyncExitStack() as stack:
        computer = await stack.enter_async_context(connect_raw(server, None))
        asking_computer(computer, seen)
        assert await computer.join("computer", "c1", "o1") == (True, None)
        agent = await stack.enter_async_context(connect_raw(server, None))
        assert await agent.join("agent", "a1", "o1") == (True, None)
        answer = await agent.call(Event.TOOL_CALL, call(tool_name="greet", **{key: value}))
    assert isinstance(answer, dict) and answer["code"] == 400
    assert f"$.{key}" in str(answer)
    assert seen == []  # the Computer never saw it
