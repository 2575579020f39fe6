"""What the Server pushes (``notify:*``): listeners, streams and the caches they keep.

Notifications are decoded by :mod:`a2c_agent._rules`; here they fan out to listeners and
streams and drive the tool cache, desktop refreshes and the skill tracker.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from a2c_protocol import (
    A2CError,
    A2CSkillRef,
    Event,
    EventKind,
    GetDeskTopReq,
    GetDeskTopRet,
    GetToolsReq,
    GetToolsRet,
    ListRoomReq,
    ListRoomRet,
    Role,
)

from ._core import AgentCore, new_req_id
from ._exceptions import (
    InvalidResponseError,
)
from ._notify import Listeners, NotificationStream
from ._rules import (
    Action,
    DropTools,
    FetchTools,
    RefreshDesktop,
    ToolCache,
    actions_for,
    decode_ack,
    decode_notification,
    tools_from_ret,
)
from ._session._lifecycle import AgentState
from ._skills import SkillsListener, SkillTracker
from ._types import AgentNotification, AgentTool

logger = logging.getLogger("a2c_agent")

_NOTIFY_EVENTS = tuple(e for e in Event if e.value.startswith(EventKind.NOTIFY.value + ":"))

#: ``callback(notification)``; may be a coroutine function.
NotificationListener = Callable[[AgentNotification], Any]
#: ``callback(computer, tools)``; ``tools`` is None when the Computer's tools were dropped.
ToolsListener = Callable[[str, "tuple[AgentTool, ...] | None"], Any]
#: ``callback(computer, desktops)`` after an automatic desktop refresh.
DesktopListener = Callable[[str, "list[str]"], Any]
#: ``callback(old_state, new_state)``.
StateListener = Callable[[AgentState, AgentState], Any]


class Events:
    """What the Server pushes: listeners, notification streams, the tool cache and the
    skills seen; the inbound ``notify:*`` handlers are its bound methods."""

    def __init__(
        self,
        core: AgentCore,
        office: Callable[[], str | None],
        fetch_skills: Callable[[str], Awaitable[Sequence[A2CSkillRef]]],
        *,
        tool_cache: bool,
        desktop_size: int | None,
    ) -> None:
        self._core = core
        self._channel, self._life, self._name = core.channel, core.life, core.name
        self._spawn = core.spawn
        self._office_now = office
        self._tool_cache_enabled = tool_cache
        self._desktop_size = desktop_size
        self._cache = ToolCache()
        self._streams: set[NotificationStream] = set()
        self._notification_listeners = Listeners(core.spawn)
        self._tools_listeners = Listeners(core.spawn)
        self._desktop_listeners = Listeners(core.spawn)
        self.skills = SkillTracker(fetch_skills, core.spawn)

    @property
    def tools(self) -> Mapping[str, tuple[AgentTool, ...]]:
        """The tool cache (a read-only snapshot)."""
        return self._cache.view()

    def handlers(self) -> dict[str, Callable[..., Awaitable[None]]]:
        """Socket.IO event name -> handler, for every ``notify:*`` of the protocol."""
        return {event.value: self._notify_handler(event) for event in _NOTIFY_EVENTS}

    def close_streams(self) -> None:
        """End every notification stream (the agent ended)."""
        for stream in list(self._streams):
            stream.close()

    def forget_all(self, *, tell_listeners: bool) -> None:
        """Drop every tool and skill seen (the agent is out of its office);
        ``tell_listeners=False`` (closing) does not tell the tools listeners."""
        if tell_listeners:
            self._drop_all_tools()
        else:
            self._cache.clear()
            self.skills.clear()

    # ------------------------------------------------------------------- listeners

    def add_notification_listener(
        self, callback: NotificationListener, *events: Event
    ) -> Callable[[], None]:
        """See :meth:`AsyncAgent.add_notification_listener`."""
        wanted = frozenset(events) if events else None

        def filtered(notification: AgentNotification) -> Any:
            if wanted is None or notification.event in wanted:
                return callback(notification)
            return None

        return self._notification_listeners.add(filtered)

    def notifications(self, *events: Event) -> NotificationStream:
        """See :meth:`AsyncAgent.notifications`."""
        stream: NotificationStream

        def forget() -> None:
            self._streams.discard(stream)

        stream = NotificationStream(frozenset(events) if events else None, forget)
        if self._life.state is AgentState.CLOSED:
            stream.close()
        else:
            self._streams.add(stream)
        return stream

    def add_tools_listener(self, callback: ToolsListener) -> Callable[[], None]:
        """See :meth:`AsyncAgent.add_tools_listener`."""
        return self._tools_listeners.add(callback)

    def add_desktop_listener(self, callback: DesktopListener) -> Callable[[], None]:
        """See :meth:`AsyncAgent.add_desktop_listener`."""
        return self._desktop_listeners.add(callback)

    def add_skills_listener(self, callback: SkillsListener) -> Callable[[], None]:
        """See :meth:`AsyncAgent.add_skills_listener`."""
        return self.skills.add_listener(callback)

    def add_state_listener(self, callback: StateListener) -> Callable[[], None]:
        """See :meth:`AsyncAgent.add_state_listener`."""
        return self._core.state_listeners.add(callback)

    # --------------------------------------------------------------- tool cache

    def _drop_all_tools(self) -> None:
        dropped = list(self._cache.view())
        self._cache.clear()
        for computer in dropped:
            self._tools_listeners.fire(computer, None)
        self.skills.clear()

    async def refresh_all_tools(self) -> None:
        """Fill the tool cache anew from every Computer in the office."""
        office = self._office_now()
        if office is None:
            return
        self._drop_all_tools()
        try:
            ret = decode_ack(
                Event.LIST_ROOM,
                ListRoomRet,
                await self._channel.request(
                    Event.LIST_ROOM,
                    ListRoomReq(agent=self._name, req_id=new_req_id(), office_id=office),
                ),
            )
        except A2CError as exc:
            logger.warning("could not list office %r to fill the tool cache: %s", office, exc)
            return
        computers = [s.name for s in ret.sessions if s.role is Role.COMPUTER]
        await asyncio.gather(*(self._perform(FetchTools(c)) for c in computers))

    async def _perform(self, action: Action) -> None:
        if isinstance(action, DropTools):
            if self._cache.drop(action.computer):
                self._tools_listeners.fire(action.computer, None)
        elif isinstance(action, FetchTools):
            token = self._cache.begin_fetch(action.computer)
            try:
                ret = decode_ack(
                    Event.GET_TOOLS,
                    GetToolsRet,
                    await self._channel.request(
                        Event.GET_TOOLS,
                        GetToolsReq(
                            agent=self._name, req_id=new_req_id(), computer=action.computer
                        ),
                    ),
                )
            except A2CError as exc:
                logger.warning("could not fetch the tools of %r: %s", action.computer, exc)
                return
            tools = tools_from_ret(action.computer, ret)
            if self._cache.complete_fetch(action.computer, token, tools):
                self._tools_listeners.fire(action.computer, tools)
        elif isinstance(action, RefreshDesktop):
            try:
                ret_desktop = decode_ack(
                    Event.GET_DESKTOP,
                    GetDeskTopRet,
                    await self._channel.request(
                        Event.GET_DESKTOP,
                        GetDeskTopReq(
                            agent=self._name,
                            req_id=new_req_id(),
                            computer=action.computer,
                            desktop_size=self._desktop_size,
                        ),
                    ),
                )
            except A2CError as exc:
                logger.warning("could not refresh the desktop of %r: %s", action.computer, exc)
                return
            self._desktop_listeners.fire(action.computer, list(ret_desktop.desktops))

    # ------------------------------------------------------------- notifications

    def _notify_handler(self, event: Event) -> Callable[..., Awaitable[None]]:
        async def handler(data: object = None, *_: object) -> None:
            self._on_notification(event, data)

        return handler

    def _on_notification(self, event: Event, data: object) -> None:
        try:
            notification = decode_notification(event, data)
        except InvalidResponseError as exc:
            logger.warning("dropped a malformed %s: %s", event.value, exc)
            return
        if self._life.state is not AgentState.CONNECTED:
            return
        in_office = self._office_now() is not None
        for action in actions_for(
            notification,
            tool_cache=self._tool_cache_enabled and in_office,
            desktop_listeners=bool(self._desktop_listeners),
        ):
            self._spawn(self._perform(action))
        if in_office:
            self.skills.on_notification(notification)
        self._notification_listeners.fire(notification)
        for stream in list(self._streams):
            stream._offer(notification)
