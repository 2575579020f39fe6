"""Protocol lines: which MAJOR.MINOR a version belongs to, and the ranges a Server accepts.

A *line* is a 0.x MAJOR.MINOR (``"0.2"``, ``"0.4"``): inside a line PATCH levels interoperate
(handshake-and-versioning.md §6), across lines the wire shapes differ and only a translating
Server lets the two meet.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType
from typing import Final, Literal, TypeAlias

from a2c_protocol._versioning import (
    PROTOCOL_VERSION,
    InvalidVersionError,
    ProtocolVersion,
    supported_range,
)

__all__ = [
    "KNOWN_LINES",
    "LINE_0_2",
    "LINE_0_4",
    "LINE_VERSIONS",
    "Line",
    "accepted_ranges",
    "line_of",
    "nearest_line",
    "parse_lines",
]

Line: TypeAlias = Literal["0.2", "0.4"]

LINE_0_2: Final[Line] = "0.2"
LINE_0_4: Final[Line] = "0.4"
#: Every line this implementation can translate between, oldest first.
KNOWN_LINES: Final[tuple[Line, ...]] = (LINE_0_2, LINE_0_4)
#: The version this implementation announces (and a Server declares) on each line. 0.4.2:
#: the 0.4 shapes as the official SDK 0.4.2 speaks them.
LINE_VERSIONS: Final = MappingProxyType({LINE_0_2: PROTOCOL_VERSION, LINE_0_4: "0.4.2"})


def line_of(version: str | ProtocolVersion) -> Line | None:
    """The known line ``version`` belongs to, or None (malformed, or a line we do not know)."""
    try:
        parsed = version if isinstance(version, ProtocolVersion) else ProtocolVersion.parse(version)
    except InvalidVersionError:
        return None
    if parsed.major != 0:
        return None
    text = f"0.{parsed.minor}"
    for line in KNOWN_LINES:
        if line == text:
            return line
    return None


def parse_lines(text: str) -> tuple[Line, ...]:
    """Parse a ``--protocols`` value such as ``"0.2,0.4"``; ValueError names what is wrong."""
    wanted: list[Line] = []
    for raw in text.split(","):
        item = raw.strip()
        line = next((known for known in KNOWN_LINES if known == item), None)
        if line is None:
            raise ValueError(
                f"unknown protocol line {item!r}: expected a comma-separated list of "
                + ", ".join(KNOWN_LINES)
            )
        if line not in wanted:
            wanted.append(line)
    if not wanted:
        raise ValueError("at least one protocol line is needed")
    return tuple(sorted(wanted, key=KNOWN_LINES.index))


def accepted_ranges(lines: Iterable[Line]) -> list[dict[str, str]]:
    """``[{"min_supported": ..., "max_supported": ...}, ...]`` for each line, oldest first."""
    out: list[dict[str, str]] = []
    for line in sorted(set(lines), key=KNOWN_LINES.index):
        low, high = supported_range(f"{line}.0")
        out.append({"min_supported": low, "max_supported": high})
    return out


def nearest_line(version: str, lines: Iterable[Line]) -> Line:
    """The accepted line closest to ``version`` (by minor; the newest for a malformed one).

    A 4008 refusal reports one ``min_supported``/``max_supported`` pair: the pair of this line.
    """
    choices = sorted(set(lines), key=KNOWN_LINES.index)
    if not choices:
        raise ValueError("no accepted lines")
    try:
        parsed = ProtocolVersion.parse(version)
    except InvalidVersionError:
        return choices[-1]
    if parsed.major != 0:
        return choices[-1]
    return min(choices, key=lambda line: (abs(int(line.split(".")[1]) - parsed.minor), line))
