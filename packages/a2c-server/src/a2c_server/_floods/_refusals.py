"""Refusals logged once per cause and peer address per interval, counted in ``/metrics``.

An unauthenticated client can be refused hundreds of times a second (no token, a bad
token, a bad role); one WARNING each filled the disk (13.9 MB in 31 s). Here the
first refusal of a cause from an address is logged at once, later ones of the same cause
and address at most once per ``interval`` with ``suppressed=N`` (how many were left out);
the audit trail gets the same aggregated line. Every refusal is counted
(``a2c_server_refusals_total{cause}``). Causes are Server-chosen constants; addresses come
from clients, so the table is bounded and cleared when full.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

from prometheus_client.core import CounterMetricFamily, Metric

from a2c_server._observe._logs import log

__all__ = ["RefusalLog", "address_of"]

_MAX_KEYS: Final = 4096


def address_of(peer: str | None) -> str:
    """``host`` of a ``host:port`` peer string (IPv6 in brackets or bare), ``?`` when unknown."""
    if not peer:
        return "?"
    host, sep, port = peer.rpartition(":")
    return host.strip("[]") if sep and port.isdigit() and host else peer


class RefusalLog:
    """One WARNING per (cause, address) per ``interval``; exact counts per cause."""

    def __init__(
        self, logger: logging.Logger, *, interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self._logger = logger
        self._interval = interval
        self._clock = clock
        self._last: dict[tuple[str, str], float] = {}
        self._suppressed: dict[tuple[str, str], int] = {}
        self.counts: dict[str, int] = {}

    def refused(
        self, cause: str, message: str, peer: str | None, *, key: str | None = None,
        **fields: Any,
    ) -> int | None:  # fmt: skip
        """Count one refusal; log it unless this cause and address were logged recently.

        ``key`` replaces the address as what is rate-limited (a session id, for refusals
        of an admitted session's requests).

        Returns None when the line was left out, else how many refusals the line stands
        for (1 + those suppressed since the last one), for the audit trail's line.
        """
        self.counts[cause] = self.counts.get(cause, 0) + 1
        slot = (cause, key if key is not None else address_of(peer))
        now = self._clock()
        last = self._last.get(slot)
        if last is not None and now - last < self._interval:
            self._suppressed[slot] = self._suppressed.get(slot, 0) + 1
            return None
        if last is None and len(self._last) >= _MAX_KEYS:
            self._last.clear()
            self._suppressed.clear()
        self._last[slot] = now
        suppressed = self._suppressed.pop(slot, 0)
        log(self._logger, logging.WARNING, message, peer=peer, suppressed=suppressed or None,
            **fields)  # fmt: skip
        return 1 + suppressed

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "a2c_server_refusals",
            "Connections and events refused, by cause (logged once per cause and address "
            "per interval)",
            labels=["cause"],
        )
        for cause, count in sorted(self.counts.items()):
            family.add_metric([cause], count)
        yield family
