"""The plain-shape check of a relayed request never passes what the full model refuses."""

from __future__ import annotations

from typing import Any

import pytest

from a2c_protocol import EVENTS, Event, InvalidPayloadError, from_wire
from a2c_server._relay._route_fields import route_reader

CALL: dict[str, Any] = {"agent": "a", "req_id": "r1", "computer": "pc", "tool_name": "t",
                        "params": {"x": [1, {"y": None}]}, "timeout": 30}  # fmt: skip

PAYLOADS: list[Any] = [
    CALL,
    {**CALL, "unknown": 1},  # peers may add fields: the model ignores them
    {**CALL, "timeout": True},
    {**CALL, "timeout": 30.0},
    {**CALL, "timeout": "30"},
    {**CALL, "timeout": None},
    {**CALL, "agent": 7},
    {**CALL, "computer": None},
    {**CALL, "req_id": ["r1"]},
    {**CALL, "params": []},
    {**CALL, "params": None},
    {**CALL, "a2c_progress": True},
    {**CALL, "a2c_progress": "yes"},
    {**CALL, "a2c_trace": {"traceparent": 1}},
    {**CALL, "a2c_input": {"elicitation": {}}},
    {**CALL, "a2c_input": "all"},
    {**CALL, "a2c_input_responses": {"k": {"action": "decline"}}, "a2c_request_state": "s"},
    {**CALL, "a2c_input_responses": {"k": "decline"}},
    {**CALL, "a2c_request_state": 3},
    {k: v for k, v in CALL.items() if k != "tool_name"},
    {k: v for k, v in CALL.items() if k != "params"},
    [CALL],
    "call",
    None,
    {"agent": "a", "req_id": "r", "computer": "pc"},
    {"agent": "a", "req_id": "r", "computer": "pc", "window": "w"},
    {"agent": "a", "req_id": "r", "computer": "pc", "desktop_size": "big"},
    {
        "agent": "a",
        "req_id": "r",
        "computer": "pc",
        "mcp_server": "m",
        "name": "n",
        "blob_handle": "b",
        "chunk_offset": 0,
    },
]


def _decoded(model: type, data: Any) -> Any:
    try:
        return from_wire(model, data)
    except InvalidPayloadError:
        return None


@pytest.mark.parametrize("event", [e for e in Event if e.value.startswith("client:")])
def test_server_plain_shape_agrees_with_the_model(event: Event) -> None:
    model = EVENTS[event].request
    read = route_reader(model)
    for data in PAYLOADS:
        plain = read(data)
        full = _decoded(model, data)
        if plain is not None:
            # Passed without the model: the model accepts it, with the same routing fields.
            assert full is not None, data
            assert (full.agent, full.req_id, full.computer) == (
                plain["agent"], plain["req_id"], plain["computer"],
            )  # fmt: skip
            if event is Event.TOOL_CALL:
                assert full.timeout == plain["timeout"]


def test_server_plain_shape_takes_the_common_call_and_leaves_extensions_to_the_model() -> None:
    read = route_reader(EVENTS[Event.TOOL_CALL].request)
    assert read(CALL) is CALL and read({**CALL, "unknown": 1}) is not None
    for data in ({**CALL, "timeout": True}, {**CALL, "a2c_progress": True}, [CALL],
                 {**CALL, "a2c_request_state": "s"}):  # fmt: skip
        assert read(data) is None
    get_tools = route_reader(EVENTS[Event.GET_TOOLS].request)
    assert get_tools({"agent": "a", "req_id": "r", "computer": "pc"}) is not None
