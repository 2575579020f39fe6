"""The audit trail: one structured line and one counter per security decision.

Logger ``a2c_server.audit`` (per-call records, opt-in: ``a2c_server.audit.calls``, see
:mod:`a2c_server._observe._audit_calls`), always at INFO (a record, not an alert: the operational
log
already has its WARNING for each refusal), so an operator can route it apart. Each line
names the subject (from the identity, never the token), role, name, office and outcome
(and, for a routed request, the event and the Computer; never arguments); the counter
``a2c_server_audit_events{event, outcome}`` has bounded labels only.
"""

from __future__ import annotations

import enum
import logging
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter

from ._audit_calls import CALLS_LOGGER
from ._logs import log

__all__ = ["AUDIT_LOGGER", "Audit", "AuditEvent"]

AUDIT_LOGGER: Final = "a2c_server.audit"
_log = logging.getLogger(AUDIT_LOGGER)
_calls_log = logging.getLogger(CALLS_LOGGER)


class AuditEvent(enum.StrEnum):
    """What was decided (the ``event`` label)."""

    #: a connection to /smcp (admitted or refused)
    ADMISSION = "admission"
    #: a server:join_office (joined or refused)
    JOIN = "join"
    #: a session disconnected by the Server because its token expired
    EXPIRY = "expiry"
    #: any client:* request the office rules refused, or (only with --audit-calls, on
    #: the logger a2c_server.audit.calls) a client:tool_call forwarded
    ROUTE = "route"
    #: an admin token presented to the console (``/console``: the form or a bearer header)
    CONSOLE_LOGIN = "console_login"


class Audit:
    """Writes audit lines and counts them in ``registry``."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self._events = Counter(
            "a2c_server_audit_events",
            "Security decisions (admission, join, expiry, route, console_login) by outcome",
            ["event", "outcome"],
            registry=registry,
        )
        # Every forwarded tool call is audited: keep the labelled children, not a lookup each.
        self._children: dict[tuple[str, str], Any] = {}

    def record(
        self,
        event: AuditEvent,
        outcome: str,
        *,
        sid: str | None = None,
        subject: str | None = None,
        role: str | None = None,
        name: str | None = None,
        office: str | None = None,
        reason: str | None = None,
        peer: str | None = None,
        request: str | None = None,
        computer: str | None = None,
        tool: str | None = None,
    ) -> None:
        """One decision; ``outcome`` is a short fixed word (``ok``, ``refused``…)."""
        key = (event.value, outcome)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self._events.labels(*key)
        child.inc()
        # A forwarded call's record is only ever asked for with --audit-calls: its own sink.
        logger = _calls_log if event is AuditEvent.ROUTE and outcome == "ok" else _log
        log(logger, logging.INFO, "audit", event=event.value, outcome=outcome, subject=subject,
            role=role, name=name, office=office, request=request, computer=computer, tool=tool,
            sid=sid, peer=peer, reason=reason)  # fmt: skip
