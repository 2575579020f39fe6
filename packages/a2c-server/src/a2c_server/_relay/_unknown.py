"""Answers for ``client:*`` / ``server:*`` events this Server has no handler for.

python-socketio sends no ack for an event without a handler, so a peer of a newer PATCH
level that asks for something we do not know would wait out its own timeout. The catch-all
handler registered here answers such a request with the flat 400 of
:func:`a2c_server._state._rules.unknown_event_refusal` instead. Each distinct name is logged once
at INFO (later ones at DEBUG), so a chatty peer cannot flood the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

from a2c_protocol import to_wire
from a2c_server._observe._logs import log
from a2c_server._state._rules import unknown_event_refusal

__all__ = ["UnknownEvents"]

_log = logging.getLogger("a2c_server.namespace")
_REMEMBERED: Final = 256  # distinct names logged at INFO before every further one is DEBUG


class UnknownEvents:
    """The catch-all ``*`` handler of the namespace.

    ``not_handled`` is python-socketio's marker for "no handler": returning it keeps the
    library's own behaviour (no ack) for names that are not protocol requests.
    """

    def __init__(self, not_handled: object, penalize: Callable[[str], None] | None = None) -> None:
        self._not_handled = not_handled
        self._penalize = penalize  # the inbound budget: a name nobody handles costs (floods)
        self._seen: set[str] = set()

    async def handle(self, event: Any, sid: str, *args: Any) -> Any:
        """The handler python-socketio calls as ``(event, sid, *args)``."""
        name = event if isinstance(event, str) else str(event)
        refusal = unknown_event_refusal(name)
        if self._penalize is not None:
            self._penalize(sid)
        if refusal is None:
            return self._not_handled
        first = len(self._seen) < _REMEMBERED and name not in self._seen
        if first:
            self._seen.add(name)
        log(_log, logging.INFO if first else logging.DEBUG, "unknown event answered",
            sid=sid, event=refusal.details["event"] if refusal.details else name,
            code=refusal.code)  # fmt: skip
        return to_wire(refusal.to_payload())
