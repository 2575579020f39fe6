"""Office membership of the Agent: join, leave (cancelling calls first), list."""

from __future__ import annotations

import logging

from a2c_agent._core import AgentCore, new_req_id
from a2c_agent._events import Events
from a2c_agent._exceptions import (
    AgentStateError,
)
from a2c_agent._rpc._inflight import depart
from a2c_agent._rules import (
    decode_office_ack,
)
from a2c_protocol import (
    A2CError,
    EnterOfficeReq,
    Event,
    LeaveOfficeReq,
    ListRoomReq,
    ListRoomRet,
    Role,
    SessionInfo,
)

logger = logging.getLogger("a2c_agent")

#: The longest close() waits for the Server to acknowledge the leave after cancelling.
_DEPART_TIMEOUT = 5.0


class Membership:
    """Joining, leaving and listing an office: the one owner of the office the agent is in."""

    def __init__(self, core: AgentCore, events: Events, *, tool_cache: bool) -> None:
        self._channel, self._life, self._name = core.channel, core.life, core.name
        self._calls, self._ask, self._send_cancel = core.calls, core.ask, core.send_cancel
        self._request_timeout = core.request_timeout
        self._events = events
        self._tool_cache_enabled = tool_cache
        self._office: str | None = None  # out of any office until a join

    @property
    def office(self) -> str | None:
        """The office the agent is in, or None."""
        return self._office

    async def join_office(self, office_id: str) -> None:
        """See :meth:`AsyncAgent.join_office`."""
        self._life.require_connected()
        if self._office is not None and self._office != office_id:
            await self.leave_office()
        await self.join(office_id)
        if self._tool_cache_enabled:
            await self._events.refresh_all_tools()

    async def leave_office(self) -> None:
        """See :meth:`AsyncAgent.leave_office`."""
        self._life.require_connected()
        office = self._office
        if office is None:
            raise AgentStateError("the agent is not in an office")
        for req_id in self._calls.claim_all():  # cancelled while still in the office
            await self._send_cancel(req_id)
        args = await self._channel.request(Event.LEAVE_OFFICE, LeaveOfficeReq(office_id=office))
        self._calls.take_unflushed()  # the leave's ack: the Server has seen those cancels
        decode_office_ack(Event.LEAVE_OFFICE, office, args)
        self.vacate()

    async def list_room(self, office_id: str | None = None) -> list[SessionInfo]:
        """See :meth:`AsyncAgent.list_room`."""
        office = office_id or self._office
        if office is None:
            raise AgentStateError("join an office first, or pass office_id")
        ret = await self._ask(
            Event.LIST_ROOM,
            ListRoomReq(agent=self._name, req_id=new_req_id(), office_id=office),
            ListRoomRet,
        )
        return list(ret.sessions)

    async def depart(self) -> None:
        """Cancel the calls in flight, then leave the office (bounded, never raises)."""
        office = self._office

        async def leave() -> None:
            wait = min(self._request_timeout, _DEPART_TIMEOUT)
            try:
                args = await self._channel.request(
                    Event.LEAVE_OFFICE, LeaveOfficeReq(office_id=office or ""), timeout=wait
                )
                decode_office_ack(Event.LEAVE_OFFICE, office or "", args)
            except A2CError as exc:
                logger.info("leaving office %r before closing failed: %s", office, exc)

        await depart(self._calls, self._send_cancel, leave)

    def vacate(self, *, tell_listeners: bool = True) -> None:
        """Be out of the office: every path that leaves it (a leave, a close, a lost link
        that ends the agent, a refusal that ends it) comes through here, so the office
        and the tools seen in it go together.

        ``tell_listeners=False`` (closing) clears the tools without telling the tools
        listeners each Computer is gone: the agent itself is.
        """
        self._office = None
        self._events.forget_all(tell_listeners=tell_listeners)

    async def join(self, office_id: str) -> None:
        """Enter ``office_id`` (no tool refresh: :meth:`join_office` and the rejoin do it)."""
        request = EnterOfficeReq(role=Role.AGENT, name=self._name, office_id=office_id)
        args = await self._channel.request(Event.JOIN_OFFICE, request)
        decode_office_ack(Event.JOIN_OFFICE, office_id, args)
        self._office = office_id
