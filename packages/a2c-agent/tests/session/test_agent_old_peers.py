"""A 0.2.3 Agent against a Server of protocol 0.2.0, which knows none of the 0.2.1 events.

Every 0.2.x passes every 0.2.x version gate, so the Agent learns it only from how the
request ends: a decorator-style python-socketio Server never answers an event it has no
handler for; a class-based namespace acks it with nothing. Both stand-ins below are real
python-socketio servers under uvicorn; they speak just enough 0.2.0 to be joined.
Either way the Agent raises :class:`EventUnsupportedError` (spec checklist: "reported as
unsupported, no crash, no retry storm"), and 0.2.0 events keep their usual errors.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import socketio

from a2c_agent import AckTimeoutError, AsyncAgent, EventUnsupportedError, InvalidResponseError
from a2c_protocol import NAMESPACE, Event
from a2c_testkit.server import serving

OFFICE = "office-1"


def _office_events() -> dict[str, Callable[..., Any]]:
    """The 0.2.0 room events the Agent needs to join."""

    def join(data: dict[str, Any]) -> tuple[bool, None]:
        return True, None

    def list_room(data: dict[str, Any]) -> dict[str, Any]:
        return {"sessions": [], "req_id": data.get("req_id", "")}

    return {Event.JOIN_OFFICE.value: join, Event.LIST_ROOM.value: list_room}


class _Recording(socketio.AsyncServer):  # type: ignore[misc]
    def __init__(self, calls: list[str]) -> None:
        super().__init__(async_mode="asgi")
        self.calls = calls

    async def _trigger_event(self, event: str, namespace: str, *args: Any) -> Any:
        if event not in ("connect", "disconnect"):
            self.calls.append(event)
        return await super()._trigger_event(event, namespace, *args)


def _decorator_style(calls: list[str]) -> socketio.AsyncServer:
    # Handlers for the room events only: anything else is not handled, and python-socketio
    # then sends no ack at all.
    sio = _Recording(calls)
    for event, handler in _office_events().items():

        def make(handler: Callable[..., Any]) -> Callable[..., Any]:
            async def on(sid: str, data: Any = None) -> Any:
                return handler(data)

            return on

        sio.on(event, make(handler), namespace=NAMESPACE)
    return sio


class _ClassBased(socketio.AsyncNamespace):  # type: ignore[misc]
    def __init__(self, calls: list[str]) -> None:
        super().__init__(NAMESPACE)
        self.calls = calls
        self.handlers = _office_events()

    async def trigger_event(self, event: str, *args: Any) -> Any:
        if event in ("connect", "disconnect"):
            return True
        self.calls.append(event)
        handler = self.handlers.get(event)
        # No method for the event: python-socketio still acks, with no value.
        return handler(args[1] if len(args) > 1 else None) if handler else None


def _class_based(calls: list[str]) -> socketio.AsyncServer:
    sio = socketio.AsyncServer(async_mode="asgi")
    sio.register_namespace(_ClassBased(calls))
    return sio


@pytest.fixture(params=["decorator", "class"])
async def old_server(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, str, list[str]]]:
    calls: list[str] = []
    sio = _decorator_style(calls) if request.param == "decorator" else _class_based(calls)
    async with serving(socketio.ASGIApp(sio)) as port:
        yield request.param, f"http://127.0.0.1:{port}", calls


@pytest.fixture
async def joined(
    old_server: tuple[str, str, list[str]],
) -> AsyncIterator[tuple[str, AsyncAgent, list[str]]]:
    """(stand-in style, an Agent in the office with a 0.5 s request timeout, events seen)."""
    style, url, calls = old_server
    async with AsyncAgent(url, name="agent-1", request_timeout=0.5) as agent:
        await agent.join_office(OFFICE)
        yield style, agent, calls


async def test_new_events_are_reported_as_unsupported_once_each(
    joined: tuple[str, AsyncAgent, list[str]],
) -> None:
    style, agent, calls = joined
    with pytest.raises(EventUnsupportedError) as listed:
        await agent.get_skills("box-1")
    with pytest.raises(EventUnsupportedError) as read:
        await agent.get_skill("box-1", "some-skill")
    with pytest.raises(EventUnsupportedError) as pulled:
        await agent.get_blob("box-1", "h1")
    errors = (listed.value, read.value, pulled.value)
    assert [e.event for e in errors] == ["client:get_skills", "client:get_skill", "client:get_blob"]
    assert {e.since for e in errors} == {"0.2.1"}
    if style == "decorator":
        assert {e.cause for e in errors} == {"no_answer"}
        assert isinstance(listed.value.__cause__, AckTimeoutError)
        assert "no answer to client:get_skills within 0.5 s" in str(listed.value)
    else:
        assert {e.cause for e in errors} == {"empty_answer"}
        assert "an empty answer to client:get_skills" in str(listed.value)
    assert "0.2.1" in str(listed.value)
    # Each request went out once: no retry behind the caller's back.
    new_events = [c for c in calls if c.startswith("client:")]
    assert new_events == ["client:get_skills", "client:get_skill", "client:get_blob"]
    assert agent.skills == {}


async def test_a_0_2_0_event_left_unanswered_is_still_a_plain_timeout(
    joined: tuple[str, AsyncAgent, list[str]],
) -> None:
    style, agent, _ = joined
    if style == "decorator":
        with pytest.raises(AckTimeoutError) as timed_out:
            await agent.get_tools("box-1")
        assert not isinstance(timed_out.value, EventUnsupportedError)
    else:
        with pytest.raises(InvalidResponseError, match="expected one value, got 0"):
            await agent.get_tools("box-1")
