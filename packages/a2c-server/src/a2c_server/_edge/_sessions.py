"""Engine.IO sessions under the Socket.IO server: admission in time and a bounded queue.

Rules:

* an Engine.IO session must be admitted to a namespace within ``admission_timeout``
  seconds, else it is closed;
* one address holds at most ``max_unadmitted_per_address`` sessions not admitted yet; a
  newcomer is never refused (many clients may share an address behind a NAT or a proxy),
  the oldest unadmitted session of its address is closed instead. The address counts in
  the share handshake pacing uses (:func:`~a2c_server._floods._address.address_key`);
* a refused CONNECT (bad namespace, version, role or token) closes the transport once the
  client could read its ``connect_error``;
* a client whose outgoing queue holds more than ``max_outgoing_bytes``, or who would
  exhaust the process's ``max_queued_output_bytes``, is dropped with one logged reason.

:class:`SessionGuard` implements those hooks of the fence's
:class:`~a2c_server._upstream.ServerShim`; the Socket.IO layer above it (screening events,
calls) is :class:`a2c_server._relay._sio.SmcpSocketServer`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from a2c_protocol import NAMESPACE
from a2c_server._floods._address import address_key
from a2c_server._floods._outbox import OutputBudget
from a2c_server._floods._pacing import HandshakePacer
from a2c_server._floods._refusals import RefusalLog
from a2c_server._floods._trim import HeapTrimmer
from a2c_server._observe._noise import NoiseLog
from a2c_server._settings import ServerSettings
from a2c_server._upstream import ServerShim, abort_session, queued_bytes, wait_drained

__all__ = ["SessionGuard"]


class SessionGuard(ServerShim):
    """``ServerShim`` with Engine.IO sessions admitted in time and their queues bounded."""

    def __init__(self, *args: Any, limits: ServerSettings, noise: NoiseLog, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.noise = noise
        self.limits = limits
        self._pending: dict[str, tuple[str, asyncio.TimerHandle]] = {}  # eio_sid → (addr, timer)
        self._dropping: set[str] = set()
        self.output_budget = OutputBudget(limits.max_queued_output_bytes)
        self.output_budget.after_drop = HeapTrimmer().schedule
        #: connection refusals, logged once per cause and address per interval
        self.refusals = RefusalLog(logging.getLogger("a2c_server.namespace"))
        #: new handshakes paced while connects are refused in numbers
        self.handshake_pacer = HandshakePacer(limits.handshake_pace)

    # --------------------------------------------------------- outgoing queue

    def over_limit(self, eio_sid: str) -> bool:
        """Whether ``eio_sid`` is being dropped, starting the drop when it just went over."""
        if eio_sid in self._dropping:
            return True
        held = queued_bytes(self, eio_sid)
        budget = self.output_budget
        if held > self.limits.max_outgoing_bytes:
            cause, limit = "client_limit", self.limits.max_outgoing_bytes
        elif budget.exhausted_by(held):
            cause, limit = "process_budget", budget.limit
        else:
            return False
        self._dropping.add(eio_sid)
        budget.dropped(cause)
        self.noise.warning(
            "slow consumer", "client dropped: outgoing queue over its limit",
            eio_sid=eio_sid, cause=cause, queued=held, limit=limit,
        )  # fmt: skip
        self.start_background_task(self.close_transport, eio_sid)
        return True

    async def close_transport(self, eio_sid: str) -> None:
        """Close an Engine.IO session now, without waiting for its queue to drain."""
        await abort_session(self, eio_sid)

    # ---------------------------------------------------------------- admission

    def admit_session(self, eio_sid: str, environ: Any) -> bool:
        address = _address(environ)
        waiting = [sid for sid, (addr, _) in self._pending.items() if addr == address]
        if len(waiting) >= self.limits.max_unadmitted_per_address:
            # Never refuse the newcomer: many clients may share this address (a NAT, a
            # proxy) and a prompt one must not pay for abandoned handshakes. The oldest
            # unadmitted session of the address goes instead, so the cap still bounds them.
            oldest = waiting[0]
            _, timer = self._pending.pop(oldest)
            timer.cancel()
            self.refusals.refused(
                "unadmitted_evicted", "connection closed: too many unadmitted sessions from "
                "this address, the oldest goes", address, eio_sid=oldest,
                limit=self.limits.max_unadmitted_per_address,
            )  # fmt: skip
            self.start_background_task(self.close_transport, oldest)
        return True

    def session_opened(self, eio_sid: str, environ: Any) -> None:
        timer = asyncio.get_running_loop().call_later(
            self.limits.admission_timeout, self._admission_expired, eio_sid
        )
        self._pending[eio_sid] = (_address(environ), timer)

    def _admission_expired(self, eio_sid: str) -> None:
        if self._pending.pop(eio_sid, None) is None:
            return
        self.noise.warning(
            "admission timeout", "connection closed: not admitted in time",
            eio_sid=eio_sid, timeout=self.limits.admission_timeout,
        )  # fmt: skip
        self.start_background_task(self.close_transport, eio_sid)

    #: ``(eio_sid, environ, auth) -> connect_error data | None``, set by the namespace: a
    #: CONNECT to it refused before any Socket.IO session exists (a wrong token, cheaply).
    connect_screen: Callable[[str, Any, Any], Any] | None = None

    def early_connect_refusal(self, eio_sid: str, namespace: str, environ: Any, auth: Any) -> Any:
        screen = self.connect_screen
        if screen is None or namespace != NAMESPACE or not isinstance(environ, dict):
            return None
        return screen(eio_sid, environ, auth)

    def connect_handled(self, eio_sid: str, namespace: str) -> None:
        sid = self.manager.sid_from_eio_sid(eio_sid, namespace)
        if sid is not None and self.manager.is_connected(sid, namespace):
            admitted = self._pending.pop(eio_sid, None)
            if admitted is not None:
                admitted[1].cancel()
            return
        # Refused (bad namespace, version, role or token): the client has its
        # connect_error; keeping the transport would only hold memory and a descriptor.
        self.start_background_task(self._close_after_flush, eio_sid)

    async def _close_after_flush(self, eio_sid: str) -> None:
        # Let the client fetch the CONNECT_ERROR already queued (a polling client reads it
        # with its next GET), then close; a client that never reads gets closed anyway.
        if await wait_drained(self, eio_sid, self.limits.admission_timeout):
            await self.close_transport(eio_sid)

    def session_closing(self, eio_sid: str) -> None:
        pending = self._pending.pop(eio_sid, None)
        if pending is not None:
            pending[1].cancel()
        self._dropping.discard(eio_sid)


def _address(environ: Any) -> str:
    """The share of the session's client address (see ``address_key``)."""
    scope = environ.get("asgi.scope") if isinstance(environ, dict) else None
    client = scope.get("client") if isinstance(scope, dict) else None
    if client:
        return address_key(str(client[0]))
    return str(environ.get("REMOTE_ADDR", "?")) if isinstance(environ, dict) else "?"
