"""Which protocol line a client retries with after a 4008 refusal. No I/O.

Rules: a client announces the 0.2 line first (:data:`~a2c_protocol.PROTOCOL_VERSION`). When
the Server refuses it with 4008 and the refusal says the Server accepts the version we
announce on another line we speak (its ``min_supported``..``max_supported`` pair, or any
range in our Server's ``a2c_supported_ranges`` extension key), the client reconnects once
announcing that line and speaks its shapes for the session. A pinned line never changes,
and nothing is retried twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from a2c_protocol._exceptions import ProtocolVersionError
from a2c_protocol._versioning import InvalidVersionError, ProtocolVersion

from . import KNOWN_LINES, LINE_VERSIONS, Line, line_of

__all__ = ["retry_line"]


def _ranges(error: ProtocolVersionError) -> list[tuple[str, str]]:
    pairs = []
    if error.min_supported and error.max_supported:
        pairs.append((error.min_supported, error.max_supported))
    extra: Any = (error.details or {}).get("a2c_supported_ranges")
    for item in extra if isinstance(extra, list) else ():
        if isinstance(item, Mapping):
            low, high = item.get("min_supported"), item.get("max_supported")
            if isinstance(low, str) and isinstance(high, str):
                pairs.append((low, high))
    return pairs


def _inside(version: str, ranges: Iterable[tuple[str, str]]) -> bool:
    wanted = ProtocolVersion.parse(version)
    for low, high in ranges:
        try:
            if ProtocolVersion.parse(low) <= wanted <= ProtocolVersion.parse(high):
                return True
        except InvalidVersionError:
            continue
    return False


def retry_line(error: ProtocolVersionError, announced: str) -> Line | None:
    """The line to reconnect with after ``error`` refused ``announced``, or None.

    Newest first among the lines we speak other than ``announced``'s own.
    """
    current = line_of(announced)
    ranges = _ranges(error)
    for line in reversed(KNOWN_LINES):
        if line != current and _inside(LINE_VERSIONS[line], ranges):
            return line
    return None
