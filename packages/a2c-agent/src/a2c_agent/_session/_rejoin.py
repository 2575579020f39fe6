"""Back into the office after a reconnect: re-join, wait out a held name, or end.

Rules (``a2c_protocol._rejoin`` RJ1-RJ3 for the parts both clients share):

* the agent stays ``RECONNECTING`` until it is back in its office: a transport that is
  up again is not enough, so no request goes out from outside the office;
* a re-join refused because the name or the seat is held (maybe by this agent's own
  session on a Server node that died), or because the registry is away, is tried again
  on the same connection after 0, 1, 2, 4, 8, 8, ... s for ``rejoin_budget`` seconds
  (None: for ever); meanwhile :attr:`reconnecting_reason` and every refused request say
  why, and one WARNING is logged;
* a re-join refused for any other reason (the office no longer granted, a role
  mismatch), or still refused when the budget is spent, ends the agent: ``CLOSED``,
  :attr:`last_error` is the :class:`JoinOfficeError`, one ERROR is logged; an agent never
  stays connected outside its office in silence.
"""

from __future__ import annotations

import asyncio
import logging
import time

from a2c_agent._channel import Channel
from a2c_agent._core import AgentCore
from a2c_agent._events import Events
from a2c_agent._exceptions import AckTimeoutError, ConnectionLostError, JoinOfficeError
from a2c_protocol import A2CError, join_refusal_may_pass
from a2c_protocol._rejoin import HeldWait

from ._lifecycle import AgentState, Transition
from ._membership import Membership

__all__ = ["Rejoin", "safe_disconnect"]

logger = logging.getLogger("a2c_agent")


async def safe_disconnect(channel: Channel) -> None:
    """Disconnect the channel's transport, if any (best effort, never raises)."""
    sio = channel.sio
    if sio is None:
        return
    try:
        await sio.disconnect()
    except Exception:  # pragma: no cover - best effort on an already broken transport
        logger.debug("disconnect failed", exc_info=True)


class Rejoin:
    """Re-joining the office after the transport came back, or ending the agent (see the
    module rules): owns what a reconnecting agent waits for and why it ended."""

    def __init__(
        self,
        core: AgentCore,
        membership: Membership,
        events: Events,
        *,
        budget: float | None,
        tool_cache: bool,
    ) -> None:
        self._channel, self._life, self._name = core.channel, core.life, core.name
        self._membership = membership
        self._events = events
        self._rejoin_budget = budget
        self._tool_cache_enabled = tool_cache
        self._held: HeldWait | None = None
        self._reconnecting_reason: str | None = None
        #: Why the agent stopped on its own (``AsyncAgent.last_error``).
        self.last_error: BaseException | None = None

    def cut_announced(self, reason: str) -> None:
        """The Server said it is about to cut this connection: that is what we wait for."""
        self._reconnecting_reason = f"the Server is closing this connection ({reason})"

    @property
    def reconnecting_reason(self) -> str | None:
        """While :attr:`state` is ``RECONNECTING``, what the agent waits for, in one
        sentence (the connection, or its name or seat in the office); else None."""
        if self._life.state is not AgentState.RECONNECTING:
            return None
        return self._reconnecting_reason or "the connection to the Server is down"

    async def after_reconnect(self) -> bool:
        """Re-join the office and refresh the cache; False if the link dropped again or
        the agent ended (see the module rules)."""
        office = self._membership.office
        if office is None:
            return True
        while True:
            try:
                await self._membership.join(office)
            except (ConnectionLostError, AckTimeoutError) as exc:
                logger.info("re-join of %r interrupted: %s", office, exc)
                await safe_disconnect(self._channel)
                return False
            except JoinOfficeError as exc:
                delay = self._held_delay(office, exc)
                if isinstance(delay, JoinOfficeError):
                    await self.give_up(delay)
                    return False
                await asyncio.sleep(delay)
                sio = self._channel.sio
                if self._life.now() is not AgentState.RECONNECTING:
                    return False
                if sio is None or not sio.connected:
                    return False  # the reconnect loop opens a new transport
                continue
            except A2CError as exc:
                logger.warning("re-join of %r failed: %s; reconnecting", office, exc)
                await safe_disconnect(self._channel)
                return False
            break
        if self._held is not None:
            logger.warning("agent %s re-joined office %r after %.1f s of its name being held",
                           self._name, office, self._held.waited(time.monotonic()))  # fmt: skip
        self._held, self._reconnecting_reason = None, None
        if self._tool_cache_enabled:
            await self._events.refresh_all_tools()
        return True

    def _held_delay(self, office: str, exc: JoinOfficeError) -> float | JoinOfficeError:
        """The wait before the next re-join, or the error that ends the agent."""
        if not join_refusal_may_pass(exc.reason):
            logger.error("agent %s: re-join of office %r refused; closing: %s",
                         self._name, office, exc)  # fmt: skip
            return exc
        now = time.monotonic()
        held = self._held
        if held is None:
            held = self._held = HeldWait(now)
            logger.warning(
                "agent %s: re-join of office %r refused (%s): the name or seat may still be "
                "held by this agent's session on a Server node that went away; trying again",
                self._name, office, exc.reason,
            )  # fmt: skip
        if held.spent(self._rejoin_budget, now):
            error = JoinOfficeError(
                office, f"{exc.reason} (still refused after {held.waited(now):.0f} s of trying)"
            )
            logger.error("agent %s: %s; closing", self._name, error)
            return error
        self._reconnecting_reason = (
            f"re-joining office {office!r} was refused ({exc.reason}); trying again, the "
            "name or seat may still be held by this agent's session on a Server node that "
            "went away"
        )
        return held.next_delay()

    async def give_up(self, error: A2CError) -> None:
        """End the agent for good (a refusal waiting cannot change, met reconnecting or
        re-joining): ``CLOSED``, with ``error`` as :attr:`last_error`."""
        self.last_error = error
        self._held, self._reconnecting_reason = None, None
        self._membership.vacate()
        self._life.move(Transition.GIVE_UP)
        self._events.close_streams()
        await safe_disconnect(self._channel)
