"""Back into the office after a transport loss: reconnecting, re-joining, giving up.

:class:`Reconnecting` is the link's recovery half (a mixin of
:class:`~a2c_computer._server_link._link.ComputerLink`): reconnect with back-off and re-join;
which refusals are waited out and which end the link is :mod:`._decisions`'s. While the
Computer's name is held, :class:`HeldName` keeps the log lines of the wait
around the core's ``HeldWait`` (its start, delays and budget).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import socketio

from a2c_computer._exceptions import ServerRefusedError
from a2c_protocol import ProtocolVersionError, reconnect_delays
from a2c_protocol._rejoin import HeldWait

from ._decisions import ReconnectRefusal, judge_reconnect_refusal
from ._link_calls import LinkCalls

__all__ = ["HeldName", "Reconnecting"]

logger = logging.getLogger("a2c_computer.link")


class HeldName:
    """The re-join schedule while the name is held (``_decisions``: it never gives up).

    One WARNING when it starts, one ERROR when the budget is spent (another client may
    hold the name for good), nothing per attempt in between.
    """

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.wait: HeldWait | None = None  # None until the name is first found held
        self._told_budget = False

    def next_delay(self, name: str, office: str, reason: str | None) -> float:
        now = time.monotonic()
        wait = self.wait
        if wait is None:
            wait = self.wait = HeldWait(now)
            logger.warning(
                "re-join of office %s refused (%s): the name may still be held by this "
                "Computer's session on a Server node that went away; trying again",
                office, reason,
            )  # fmt: skip
        elif not self._told_budget and wait.spent(self.budget, now):
            self._told_budget = True
            logger.error(
                "re-join of office %s as %s still refused after %.0f s (%s): another client "
                "may hold the name; still trying every few seconds (stop this Computer, or "
                "the other one, if that is meant)",
                office, name, wait.waited(now), reason,
            )  # fmt: skip
        return wait.next_delay()


class Reconnecting:
    """Recovery after a transport loss (mixed into ``ComputerLink``).

    ``ComputerLink.__init__`` sets every attribute declared here and implements
    :meth:`_connect_once`.
    """

    name: str
    office_id: str
    rejoin_budget: float
    fatal_error: BaseException | None
    _sio: socketio.AsyncClient | None
    _joined: asyncio.Event
    _closing: bool
    _reconnect: bool
    _reconnect_task: asyncio.Task[None] | None
    _cut_reason: str | None
    _calls: LinkCalls
    _auth_hook: Callable[[], Awaitable[Mapping[str, Any]] | Mapping[str, Any]] | None

    async def _connect_once(self, join: bool = True) -> None:
        raise NotImplementedError

    async def _on_disconnect(self, *args: Any) -> None:
        self._joined.clear()
        told, self._cut_reason = self._cut_reason, None
        self._calls.cancel_undeliverable(args[0] if args else "transport loss")
        if self._closing or not self._reconnect:
            return
        if told is not None:  # expected with short-lived tokens: not a warning
            fresh = " with a fresh token" if "token" in told else ""  # not for a shutdown
            logger.info("disconnected by the Server: %s; reconnecting%s", told, fresh)
        else:
            logger.warning("disconnected from the Server (%s); reconnecting",
                           args[0] if args else "transport loss")  # fmt: skip
        if self._reconnect_task is None or self._reconnect_task.done():
            self._reconnect_task = asyncio.ensure_future(self._reconnect_loop())

    async def _reconnect_loop(self) -> None:
        refused_for: str | None = None  # the refusal being waited out, logged once
        delays = reconnect_delays(initial=0.5, maximum=10.0)
        held = HeldName(self.rejoin_budget)
        delay = next(delays)
        while True:
            if self._closing:
                return
            await asyncio.sleep(delay)
            if self._is_closing():
                return
            delay = next(delays)
            old = self._sio
            self._sio = None
            if old is not None:
                with contextlib.suppress(Exception):
                    await old.disconnect()
            try:
                await self._connect_once()
            except ProtocolVersionError as exc:
                self.fatal_error = exc
                logger.error("reconnect refused for protocol version; giving up: %s", exc)
                return
            except ServerRefusedError as exc:
                kind = judge_reconnect_refusal(exc, credentials_renew=self._auth_hook is not None)
                if kind is ReconnectRefusal.NAME_HELD:
                    delay = held.next_delay(self.name, self.office_id, exc.join_reason)
                    continue
                if kind is ReconnectRefusal.TOKEN:
                    # A token renewed a little late: the next attempt reads it again.
                    message = str(exc.error)
                    if message != refused_for:
                        refused_for = message
                        logger.warning(
                            "reconnect refused (%s); retrying with back-off, reading the "
                            "token again each time",
                            message,
                        )
                    continue
                # A revoked grant or an office no longer granted needs an operator:
                # retrying would only hammer the Server.
                self.fatal_error = exc
                logger.error("reconnect refused by the Server; giving up: %s", exc)
                return
            except Exception as exc:
                logger.info("reconnect failed: %s", exc)
                continue
            if (wait := held.wait) is not None:
                waited = wait.waited(time.monotonic())
                logger.warning("re-joined office %s as %s after %.1f s of its name being held",
                               self.office_id, self.name, waited)  # fmt: skip
            else:
                logger.info("reconnected and re-joined office %s", self.office_id)
            return

    def _is_closing(self) -> bool:
        # A method, so the type checker does not assume the flag is unchanged across awaits.
        return self._closing
