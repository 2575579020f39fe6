"""What the Server pushes (``notify:*``): listeners, streams and the caches they keep.

Notifications are decoded by :mod:`a2c_agent._rules`; here they fan out to listeners and
streams and drive the tool cache, desktop refreshes and the skill tracker.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from a2c_protocol import (
    A2CError,
    Event,
    GetDeskTopReq,
    GetDeskTopRet,
    GetToolsReq,
    GetToolsRet,
    ListRoomReq,
    ListRoomRet,
    Role,
)

from ._core import AgentCore, _req_id
from ._exceptions import (
    InvalidResponseError,
)
from ._notify import NotificationStream
from ._rules import (
    Action,
    DropTools,
    FetchTools,
    RefreshDesktop,
    actions_for,
    decode_ack,
    decode_notification,
    tools_from_ret,
)
from ._session._lifecycle import AgentState
from ._skills import SkillsListener
from ._types import AgentNotification, AgentTool

logger = logging.getLogger("a2c_agent")

#: ``callback(notification)``; may be a coroutine function.
NotificationListener = Callable[[AgentNotification], Any]
#: ``callback(computer, tools)``; ``tools`` is None when the Computer's tools were dropped.
ToolsListener = Callable[[str, "tuple[AgentTool, ...] | None"], Any]
#: ``callback(computer, desktops)`` after an automatic desktop refresh.
DesktopListener = Callable[[str, "list[str]"], Any]
#: ``callback(old_state, new_state)``.
StateListener = Callable[[AgentState, AgentState], Any]


class EventsMixin(AgentCore):
    """What the Server pushes: listeners, notification streams and the tool cache."""

    # ------------------------------------------------------------------- listeners

    def add_notification_listener(
        self, callback: NotificationListener, *events: Event
    ) -> Callable[[], None]:
        """Call ``callback(notification)`` for every ``notify:*`` (or only ``events``).

        Returns a function that removes the listener.
        """
        wanted = frozenset(events) if events else None

        def filtered(notification: AgentNotification) -> Any:
            if wanted is None or notification.event in wanted:
                return callback(notification)
            return None

        return self._notification_listeners.add(filtered)

    def notifications(self, *events: Event) -> NotificationStream:
        """A :class:`NotificationStream` of every ``notify:*`` (or only ``events``)."""
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
        """Call ``callback(computer, tools_or_None)`` whenever the tool cache changes."""
        return self._tools_listeners.add(callback)

    def add_desktop_listener(self, callback: DesktopListener) -> Callable[[], None]:
        """Call ``callback(computer, desktops)`` after ``notify:update_desktop``.

        Registering one turns the automatic desktop refresh on.
        """
        return self._desktop_listeners.add(callback)

    def add_skills_listener(self, callback: SkillsListener) -> Callable[[], None]:
        """Call ``callback(computer, skills)`` after each skill-list fetch of ``computer``.

        ``skills`` is None when the entry was dropped (the Computer left, the agent left).
        """
        return self._skills.add_listener(callback)

    def add_state_listener(self, callback: StateListener) -> Callable[[], None]:
        """Call ``callback(old, new)`` on every lifecycle state change."""
        return self._state_listeners.add(callback)

    # --------------------------------------------------------------- tool cache

    def _drop_all_tools(self) -> None:
        dropped = list(self._cache.view())
        self._cache.clear()
        for computer in dropped:
            self._tools_listeners.fire(computer, None)
        self._skills.clear()

    async def _refresh_all_tools(self) -> None:
        office = self._office
        if office is None:
            return
        self._drop_all_tools()
        try:
            ret = decode_ack(
                Event.LIST_ROOM,
                ListRoomRet,
                await self._channel.request(
                    Event.LIST_ROOM,
                    ListRoomReq(agent=self._name, req_id=_req_id(), office_id=office),
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
                        GetToolsReq(agent=self._name, req_id=_req_id(), computer=action.computer),
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
                            req_id=_req_id(),
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

    async def _on_progress(self, data: object = None, *_: object) -> None:
        self._progress.on_notify(data)

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
        in_office = self._office is not None
        for action in actions_for(
            notification,
            tool_cache=self._tool_cache_enabled and in_office,
            desktop_listeners=bool(self._desktop_listeners),
        ):
            self._spawn(self._perform(action))
        if in_office:
            self._skills.on_notification(notification)
        self._notification_listeners.fire(notification)
        for stream in list(self._streams):
            stream._offer(notification)
