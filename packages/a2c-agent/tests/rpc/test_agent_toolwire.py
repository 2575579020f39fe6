"""The tool call's own wire path: the request built by hand and the answer's fast
decode give exactly what the converter gives, errors included; the answer's timer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2c_agent import InvalidResponseError, RemoteError
from a2c_agent._rpc import _toolwire
from a2c_agent._rpc._blobdrain import needs_drain
from a2c_agent._rpc._deadline import Deadline, expire
from a2c_agent._rpc._toolwire import tool_call_payload, tool_result_of
from a2c_agent._rules import decode_ack
from a2c_protocol import CallToolResult, Event, ToolCallReq, to_wire

OFFICE = "office-1"

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), st.text(max_size=3)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
_OBJECT = st.dictionaries(st.sampled_from(["type", "text", "_meta", "data"]), _JSON, max_size=3)
_VALUES = {
    "content": st.one_of(st.lists(_OBJECT, max_size=3), st.lists(_JSON, max_size=2), _JSON),
    "isError": st.one_of(st.booleans(), _JSON),
    "meta": st.one_of(st.none(), _OBJECT, _JSON),
    "_meta": st.one_of(st.none(), _OBJECT),
    "structuredContent": st.one_of(st.none(), _OBJECT, _JSON),
    "code": st.one_of(st.integers(400, 4104), _JSON),
    "message": st.one_of(st.text(max_size=5), _JSON),
    "extra": _JSON,
}
# Any subset of the keys, each with a plausible or a wrong value; and, as often, an answer
# of the plain keys only with a list of objects as content (the fast path's own ground).
_ANSWER = st.one_of(
    st.fixed_dictionaries({}, optional=dict(_VALUES)),
    st.fixed_dictionaries(
        {"content": st.lists(_OBJECT, max_size=3)},
        optional={k: _VALUES[k] for k in ("isError", "meta", "structuredContent")},
    ),
)


def _outcome(decode: Any, args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        return "ok", decode(args)
    except Exception as exc:  # the comparison is the point: type and message
        return type(exc).__name__, str(exc)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_ANSWER.map(lambda a: (a,)), st.lists(_ANSWER, max_size=2).map(tuple)))
def test_the_fast_decode_is_the_converter(args: tuple[Any, ...]) -> None:
    fast = _outcome(tool_result_of, args)
    slow = _outcome(lambda a: decode_ack(Event.TOOL_CALL, CallToolResult, a), args)
    assert fast == slow
    if fast[0] == "ok":  # the same objects inside, a list of its own
        assert fast[1].content is not args[0]["content"]
        assert all(x is y for x, y in zip(fast[1].content, args[0]["content"], strict=True))


def test_plain_answers_skip_the_converter_and_others_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[object] = []

    def spy(event: Event, response: type, args: Any) -> Any:
        calls.append(args)
        return decode_ack(event, response, args)

    monkeypatch.setattr(_toolwire, "decode_ack", spy)
    text = {"type": "text", "text": "hi"}
    assert tool_result_of(({"content": [text], "isError": False},)) == CallToolResult(
        content=[text]
    )
    assert tool_result_of(
        ({"content": [], "isError": True, "meta": {"a": 1}, "structuredContent": None},)
    ) == CallToolResult(content=[], is_error=True, meta={"a": 1})
    assert calls == []
    assert tool_result_of(({"content": [text], "_meta": {"a": 1}},)).meta == {"a": 1}
    with pytest.raises(RemoteError, match="nope"):
        tool_result_of(({"code": 404, "message": "nope"},))
    with pytest.raises(InvalidResponseError, match=r"client:tool_call answer.*\$\.content"):
        tool_result_of(({"content": "nope"},))
    assert len(calls) == 3


@pytest.mark.parametrize("progress", [False, True])
@pytest.mark.parametrize("trace", [None, {"traceparent": "00-1-2-01"}])
def test_the_request_is_the_models_wire_form(progress: bool, trace: dict[str, str] | None) -> None:
    built = tool_call_payload("a", "r", "c", "t", {"x": [1]}, 3, progress, trace)
    model = ToolCallReq(
        agent="a",
        req_id="r",
        computer="c",
        tool_name="t",
        params={"x": [1]},
        timeout=3,
        a2c_progress=True if progress else None,
        a2c_trace=trace,
    )
    assert built == to_wire(model)
    assert list(built) == list(to_wire(model))


async def test_malformed_tool_answer_from_a_computer_is_a_typed_error(make_computer, make_agent):
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, lambda p: {"content": [{"type": "text"}], "isError": "no"})
    agent = await make_agent(tool_cache=False)
    await agent.join_office(OFFICE)
    with pytest.raises(
        InvalidResponseError, match="client:tool_call answer: is_error: expected boolean"
    ):
        await agent.call_tool("box-1", "x", {})
    computer.on(Event.TOOL_CALL, lambda p: {"content": [{"type": "text", "text": "ok"}]})
    assert (await agent.call_tool("box-1", "x", {})).content == [{"type": "text", "text": "ok"}]


async def test_deadline_fires_moves_and_stops() -> None:
    loop = asyncio.get_running_loop()
    late: asyncio.Future[Any] = loop.create_future()
    deadline = Deadline(loop, late, "client:tool_call", 0.05)
    with pytest.raises(TimeoutError, match=r"no answer to client:tool_call within 0\.05 s"):
        await late
    assert deadline.expired() and deadline.when() is None

    moved: asyncio.Future[Any] = loop.create_future()
    deadline = Deadline(loop, moved, "client:tool_call", 0.05)
    deadline.reschedule(loop.time() + 60)
    when = deadline.when()
    assert when is not None and when > loop.time() + 50
    await asyncio.sleep(0.1)
    assert not moved.done()  # the first timer was cancelled
    moved.set_result(("answer",))
    deadline.reschedule(loop.time() + 0.01)  # over: nothing moves, nothing fires
    deadline.cancel()
    await asyncio.sleep(0.05)
    expire(moved, "client:tool_call", 0.05)  # a timer that was already due: no harm either
    assert moved.result() == ("answer",)


def test_only_results_with_a_handled_item_are_drained() -> None:
    text = {"type": "text", "text": "hi"}
    handled = {"type": "image", "data": "", "_meta": {"a2c_blob_handle": "h", "other": 1}}
    assert not needs_drain(CallToolResult(content=[text, {"type": "image", "_meta": {}}]))
    assert needs_drain(CallToolResult(content=[text, handled]))
