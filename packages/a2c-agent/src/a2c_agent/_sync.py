"""``SyncAgent``: the blocking facade for scripts and notebooks.

There is no second implementation: a ``SyncAgent`` owns an :class:`AsyncAgent` running on a
private event loop thread, and every method is produced by one generic forwarder
(:func:`_blocking`) from the ``AsyncAgent`` method of the same name, keeping its signature
for type checkers. Listener callbacks run on that private loop thread.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from concurrent.futures import Future
from typing import Any, Concatenate, ParamSpec, TypeVar

from a2c_protocol import A2CResource, A2CSkillRef, Event

from ._agent import AsyncAgent
from ._exceptions import AgentStateError
from ._notify import NotificationStream
from ._session._lifecycle import AgentState
from ._types import AgentNotification, AgentTool

__all__ = ["SyncAgent"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


class _LoopThread:
    """An event loop running forever on a daemon thread until stopped."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="a2c-agent-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    def run(self, coro: Coroutine[Any, Any, R]) -> R:
        if threading.current_thread() is self._thread:
            coro.close()
            raise AgentStateError("a SyncAgent method was called from its own loop thread")
        future: Future[R] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result()

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()


def _blocking(
    method: Callable[Concatenate[AsyncAgent, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[SyncAgent, P], R]:
    """The blocking twin of an ``AsyncAgent`` coroutine method (same name and signature)."""

    def forward(agent: SyncAgent, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return agent._portal().run(method(agent._agent, *args, **kwargs))

    functools.update_wrapper(forward, method)  # name, doc and (via __wrapped__) signature
    forward.__qualname__ = f"SyncAgent.{method.__name__}"
    return forward


class SyncAgent:
    """The same Agent as :class:`AsyncAgent`, with blocking methods.

    ::

        with SyncAgent("http://hub:8000", name="bot") as agent:
            agent.join_office("office-1")
            print(agent.call_tool("build-box", "word_count", {"text": "a b"}))

    Takes exactly the keyword arguments of :class:`AsyncAgent`.
    """

    def __init__(self, server_url: str, **options: Any) -> None:
        # Validate the arguments now, in the caller's thread, with the real constructor.
        self._agent = AsyncAgent(server_url, **options)
        self._thread: _LoopThread | None = None

    def _portal(self) -> _LoopThread:
        if self._thread is None:
            raise AgentStateError("the agent is not open; use 'with SyncAgent(...)'")
        return self._thread

    def __enter__(self) -> SyncAgent:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Start the private loop and connect."""
        if self._thread is not None:
            raise AgentStateError("the agent is already open")
        self._thread = _LoopThread()
        try:
            self._thread.run(self._agent.open())
        except BaseException:
            self._thread.stop()
            self._thread = None
            raise

    def close(self) -> None:
        """Disconnect and stop the private loop; idempotent."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        try:
            thread.run(self._agent.close())
        finally:
            thread.stop()

    @property
    def async_agent(self) -> AsyncAgent:
        """The underlying :class:`AsyncAgent` (only use it on the private loop)."""
        return self._agent

    @property
    def name(self) -> str:
        return self._agent.name

    @property
    def state(self) -> AgentState:
        return self._agent.state

    @property
    def office_id(self) -> str | None:
        return self._agent.office_id

    @property
    def tools(self) -> Mapping[str, tuple[AgentTool, ...]]:
        return self._agent.tools

    @property
    def skills(self) -> Mapping[str, tuple[A2CSkillRef, ...]]:
        return self._agent.skills

    join_office = _blocking(AsyncAgent.join_office)
    leave_office = _blocking(AsyncAgent.leave_office)
    list_room = _blocking(AsyncAgent.list_room)
    get_tools = _blocking(AsyncAgent.get_tools)
    get_config = _blocking(AsyncAgent.get_config)
    get_desktop = _blocking(AsyncAgent.get_desktop)
    get_resources = _blocking(AsyncAgent.get_resources)
    call_tool = _blocking(AsyncAgent.call_tool)
    cancel_tool_call = _blocking(AsyncAgent.cancel_tool_call)
    get_blob = _blocking(AsyncAgent.get_blob)
    read_blob = _blocking(AsyncAgent.read_blob)
    put_blob = _blocking(AsyncAgent.put_blob)
    get_skills = _blocking(AsyncAgent.get_skills)
    get_skill = _blocking(AsyncAgent.get_skill)

    def iter_resources(self, computer: str, mcp_server: str) -> Iterator[A2CResource]:
        """Every resource of ``mcp_server``, following ``next_cursor`` page by page."""
        return self._blocking_iter(self._agent.iter_resources(computer, mcp_server))

    def notifications(self, *events: Event) -> Iterator[AgentNotification]:
        """Blocking iterator of notifications (all, or only ``events``); ends on close.

        Leaving the loop early (``break``) unregisters the stream.
        """

        async def open_stream() -> NotificationStream:
            return self._agent.notifications(*events)

        stream = self._portal().run(open_stream())
        return self._blocking_iter(stream, on_exit=stream.close)

    def _blocking_iter(
        self, iterator: AsyncIterator[T], on_exit: Callable[[], None] | None = None
    ) -> Iterator[T]:
        """Drive an async iterator of the private loop from this thread, one item per step."""

        async def step() -> tuple[bool, T | None]:
            try:
                return True, await anext(iterator)
            except StopAsyncIteration:
                return False, None

        async def finish() -> None:
            if on_exit is not None:
                on_exit()

        try:
            while True:
                more, item = self._portal().run(step())
                if not more:
                    return
                yield item  # type: ignore[misc]
        finally:
            if self._thread is not None:
                self._thread.run(finish())

    # Listener registration is not I/O; the callbacks run on the private loop thread.
    def add_notification_listener(self, *args: Any, **kwargs: Any) -> Callable[[], None]:
        return self._agent.add_notification_listener(*args, **kwargs)

    def add_tools_listener(self, *args: Any, **kwargs: Any) -> Callable[[], None]:
        return self._agent.add_tools_listener(*args, **kwargs)

    def add_desktop_listener(self, *args: Any, **kwargs: Any) -> Callable[[], None]:
        return self._agent.add_desktop_listener(*args, **kwargs)

    def add_skills_listener(self, *args: Any, **kwargs: Any) -> Callable[[], None]:
        return self._agent.add_skills_listener(*args, **kwargs)

    def add_state_listener(self, *args: Any, **kwargs: Any) -> Callable[[], None]:
        return self._agent.add_state_listener(*args, **kwargs)
