"""Protocol version numbers and the compatibility rule.

Rules (handshake-and-versioning.md §5-§6):

* A version is exactly ``MAJOR.MINOR.PATCH`` in ASCII digits. Pre-release suffixes,
  two-part versions, whitespace and signs are malformed.
* 0.x: client and server must agree on MAJOR and MINOR; PATCH is free.
* 1.0 and later: MAJOR must agree and the server's MINOR must be >= the client's.
* A server advertises the range it accepts: ``0.m.0``..``0.m.999`` for 0.x,
  ``M.0.0``..``M.m.999`` for M >= 1.
"""

from __future__ import annotations

import re
from functools import total_ordering
from typing import Final

import attrs

__all__ = [
    "PROTOCOL_VERSION",
    "InvalidVersionError",
    "ProtocolVersion",
    "is_compatible",
    "supported_range",
]

#: The protocol version this implementation speaks and sends as ``a2c_version``.
#: Independent of any package version. 0.2.3: the 0.2.1-0.2.3 events, codes and markers
#: are part of the wire. PATCH levels interoperate (a 0.2.3 Server accepts 0.2.0-0.2.999),
#: and a peer's ``a2c_version`` is for display only: never switch features on it.
PROTOCOL_VERSION: Final = "0.2.3"

_VERSION_RE: Final = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)", re.ASCII)


class InvalidVersionError(ValueError):
    """A string is not a ``MAJOR.MINOR.PATCH`` version."""


@total_ordering
@attrs.frozen(order=False)
class ProtocolVersion:
    """A parsed ``MAJOR.MINOR.PATCH`` protocol version."""

    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> ProtocolVersion:
        """Parse ``text``; raise :class:`InvalidVersionError` explaining what is wrong.

        Leading zeros (``0.02.0``) are accepted and normalized, since the reference
        parser converts each part with an integer parse.
        """
        if not isinstance(text, str):
            raise InvalidVersionError(f"expected a string, got {type(text).__name__}")
        match = _VERSION_RE.fullmatch(text)
        if match is None:
            raise InvalidVersionError(
                f"{text!r} is not MAJOR.MINOR.PATCH (three dot-separated ASCII numbers)"
            )
        major, minor, patch = (int(part) for part in match.groups())
        return cls(major, minor, patch)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ProtocolVersion):
            return NotImplemented
        return self._key() < other._key()


def _coerce(version: ProtocolVersion | str) -> ProtocolVersion:
    return version if isinstance(version, ProtocolVersion) else ProtocolVersion.parse(version)


def is_compatible(client: ProtocolVersion | str, server: ProtocolVersion | str) -> bool:
    """Whether a client speaking ``client`` may connect to a server running ``server``."""
    c, s = _coerce(client), _coerce(server)
    if c.major != s.major:
        return False
    if c.major == 0:
        return c.minor == s.minor
    return c.minor <= s.minor


def supported_range(server: ProtocolVersion | str) -> tuple[str, str]:
    """The ``(min_supported, max_supported)`` client versions a server accepts."""
    s = _coerce(server)
    if s.major == 0:
        return f"0.{s.minor}.0", f"0.{s.minor}.999"
    return f"{s.major}.0.0", f"{s.major}.{s.minor}.999"
