"""Randomized malformed payloads against every event of a real server.

Each ``client:*`` / ``server:list_room`` request must get exactly one flat ErrorPayload
ack (or, when the mutation happens to be valid, the normal answer); join/leave answer a
``(bool, reason)`` pair; nothing makes a handler raise (no ERROR log, no 500), and a
well-formed call still works after every example.

The server and its clients live on a background event loop for the whole module, so
hypothesis drives a plain synchronous test.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine, Iterator
from contextlib import AsyncExitStack
from typing import Any, TypeVar

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_protocol import CLIENT_EVENTS, NAMESPACE, Event, is_error_payload
from a2c_testkit.server import RawClient, RunningServer, connect_raw, running_server

T = TypeVar("T")

VALID: dict[Event, dict[str, Any]] = {
    Event.TOOL_CALL: {
        "agent": "fuzz",
        "req_id": "r",
        "computer": "c1",
        "tool_name": "t",
        "params": {},
        "timeout": 5,
    },
    Event.GET_CONFIG: {"agent": "fuzz", "req_id": "r", "computer": "c1"},
    Event.GET_TOOLS: {"agent": "fuzz", "req_id": "r", "computer": "c1"},
    Event.GET_DESKTOP: {"agent": "fuzz", "req_id": "r", "computer": "c1", "desktop_size": 2},
    Event.GET_RESOURCES: {"agent": "fuzz", "req_id": "r", "computer": "c1", "mcp_server": "m"},
    Event.JOIN_OFFICE: {"role": "agent", "name": "fuzz", "office_id": "o1"},
    Event.LEAVE_OFFICE: {"office_id": "o1"},
    Event.UPDATE_CONFIG: {"computer": "cf"},
    Event.UPDATE_TOOL_LIST: {"computer": "cf"},
    Event.UPDATE_DESKTOP: {"computer": "cf"},
    Event.TOOL_CALL_CANCEL: {"agent": "fuzz", "req_id": "r"},
    Event.LIST_ROOM: {"agent": "fuzz", "req_id": "r", "office_id": "o1"},
}
SENDABLE = list(VALID)
COMPUTER_ANSWER = {"computer": "answer"}

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def mutated(draw: st.DrawFn, event: Event) -> Any:
    base = VALID[event]
    kind = draw(st.sampled_from(["mutate", "mutate", "any", "args"]))
    if kind == "any":
        return draw(json_values)
    if kind == "args":  # several Socket.IO arguments instead of one payload
        return tuple(draw(st.lists(json_values, min_size=2, max_size=3)))
    payload = dict(base)
    for key in draw(st.sets(st.sampled_from(sorted(base)), min_size=1)):
        if draw(st.booleans()):
            del payload[key]
        else:
            payload[key] = draw(json_values)
    payload.update(draw(st.dictionaries(st.text(max_size=8), json_values, max_size=2)))
    return payload


@attrs.frozen
class Env:
    loop: asyncio.AbstractEventLoop
    server: RunningServer
    agent: RawClient
    computer: RawClient
    errors: list[logging.LogRecord]

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


class _Collect(logging.Handler):
    def __init__(self, sink: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record)


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fuzz-server", daemon=True)
    thread.start()
    stack = AsyncExitStack()
    errors: list[logging.LogRecord] = []
    handler = _Collect(errors)
    logging.getLogger("a2c_server").addHandler(handler)

    async def setup() -> tuple[RunningServer, RawClient, RawClient]:
        srv = await stack.enter_async_context(running_server())
        agent = await stack.enter_async_context(connect_raw(srv, "agent"))
        c1 = await stack.enter_async_context(connect_raw(srv, "computer"))
        cf = await stack.enter_async_context(connect_raw(srv, "computer"))
        for event in CLIENT_EVENTS:

            async def answer(*args: Any) -> Any:
                return COMPUTER_ANSWER

            c1.sio.on(event.value, answer, namespace=NAMESPACE)
        assert await c1.join("computer", "c1", "o1") == (True, None)
        return srv, agent, cf

    try:
        srv, agent, cf = asyncio.run_coroutine_threadsafe(setup(), loop).result(60)
        yield Env(loop, srv, agent, cf, errors)
    finally:

        async def teardown() -> None:
            await stack.aclose()
            # Engine.IO keeps per-socket ping tasks sleeping; end them before the loop goes.
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(teardown(), loop).result(60)
        logging.getLogger("a2c_server").removeHandler(handler)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


async def restore(env: Env, client: RawClient, role: str, name: str) -> None:
    """Put a client back in office o1 under its name, whatever the last example did."""
    sid = client.sio.get_sid(NAMESPACE)
    member = await env.server.app.store.get(sid)
    assert member is not None, "the fuzzing client lost its session"
    if (member.office_id, member.name) != ("o1", name):
        if member.office_id is not None:
            await client.call(Event.LEAVE_OFFICE, {"office_id": member.office_id})
        assert await client.join(role, name, "o1") == (True, None)


def check_answer(event: Event, answer: Any) -> None:
    if event.value.startswith("client:"):
        assert answer == COMPUTER_ANSWER or is_error_payload(answer), answer
    elif event is Event.LIST_ROOM:
        assert is_error_payload(answer) or (
            isinstance(answer, dict) and isinstance(answer.get("sessions"), list)
        ), answer
    elif event in (Event.JOIN_OFFICE, Event.LEAVE_OFFICE):
        assert isinstance(answer, tuple) and len(answer) == 2, answer
        ok, reason = answer
        assert ok is True or (ok is False and isinstance(reason, str) and reason), answer
    else:
        assert answer is None, answer  # notifications have no ack payload
    if is_error_payload(answer):
        assert set(answer) <= {"code", "message", "details"}  # flat, no envelope
        assert answer["code"] != 500, answer  # a 500 would be a handler bug


@given(data=st.data())
def test_server_fuzz_malformed_payloads_never_break_the_server(
    env: Env, data: st.DataObject
) -> None:
    event = data.draw(st.sampled_from(SENDABLE), label="event")
    payload = data.draw(mutated(event), label="payload")
    sender = env.computer if event.value.startswith("server:update_") else env.agent

    async def exchange() -> None:
        await restore(env, env.agent, "agent", "fuzz")
        await restore(env, env.computer, "computer", "cf")
        answer = await sender.call(event, payload, timeout=30)
        check_answer(event, answer)
        await restore(env, env.agent, "agent", "fuzz")
        ok = await env.agent.call(Event.GET_TOOLS, VALID[Event.GET_TOOLS], timeout=30)
        assert ok == COMPUTER_ANSWER

    env.run(exchange())
    assert env.errors == []
