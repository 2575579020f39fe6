"""``window://`` URIs (desktop-and-windows.md §1).

Rules:

* scheme is exactly ``window``; host is required and non-empty; no userinfo or port;
* the path is 0..N segments, each percent-encoded on its own (``%2F`` stays inside
  its segment);
* the URI is a pure identifier: no query, no fragment.

Two parse modes, because the layers disagree on purpose: **strict** (what an Agent
constructs: a query or fragment is an error) and **lenient** (what a Computer reads from
MCP servers: query and fragment are dropped with a WARN, identity = host + path).
Builders accept only ``[A-Za-z0-9.-]`` hosts and non-empty segments.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Final
from urllib.parse import quote, unquote

import attrs

from ._exceptions import InvalidWindowURIError

__all__ = ["WINDOW_SCHEME", "WindowURI", "is_window_uri"]

logger = logging.getLogger("a2c_protocol.window")

WINDOW_SCHEME: Final = "window"
_PREFIX: Final = "window://"
_BUILD_HOST_RE: Final = re.compile(r"[A-Za-z0-9.-]+", re.ASCII)
_FORBIDDEN_HOST_CHARS: Final = frozenset("@:[]% \t\r\n\\")


@attrs.frozen
class WindowURI:
    """A parsed window identifier: ``host`` plus decoded path ``segments``."""

    host: str
    segments: tuple[str, ...] = ()

    @classmethod
    def build(cls, host: str, *segments: str) -> WindowURI:
        """Build a URI from raw parts; segments may contain any text (it is encoded).

        Raises :class:`InvalidWindowURIError` for a host outside ``[A-Za-z0-9.-]`` or an
        empty segment.
        """
        if not isinstance(host, str) or not _BUILD_HOST_RE.fullmatch(host):
            raise InvalidWindowURIError(
                f"window host must be non-empty and use only letters, digits, '.' and '-', "
                f"got {host!r}"
            )
        for index, segment in enumerate(segments):
            if not isinstance(segment, str) or segment == "":
                raise InvalidWindowURIError(
                    f"window path segment {index} must be a non-empty string"
                )
        return cls(host, tuple(segments))

    @classmethod
    def parse(cls, text: str, *, lenient: bool = False) -> WindowURI:
        """Parse ``text``.

        Strict (default): a query or fragment raises :class:`InvalidWindowURIError`.
        Lenient: they are dropped and a WARN is logged. Both modes reject a wrong scheme,
        an empty host, userinfo and ports.
        """
        if not isinstance(text, str):
            raise InvalidWindowURIError(f"a window URI must be a string, got {type(text).__name__}")
        if not text.startswith(_PREFIX):
            scheme = text.split(":", 1)[0] if ":" in text else ""
            raise InvalidWindowURIError(
                f"{text!r} is not a window URI: scheme must be 'window://'"
                + (f", got {scheme!r}" if scheme else "")
            )
        rest = text[len(_PREFIX) :]
        cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=-1)
        if cut >= 0:
            if not lenient:
                part = "query" if rest[cut] == "?" else "fragment"
                raise InvalidWindowURIError(
                    f"{text!r}: window URIs are pure identifiers; a {part} is not allowed "
                    "(put priority in annotations and fullscreen in _meta)"
                )
            logger.warning(
                "window URI %r carries a query/fragment; dropped it (v0.2 URIs are pure "
                "identifiers; metadata belongs in annotations/_meta)",
                text,
            )
            rest = rest[:cut]
        host, _, path = rest.partition("/")
        if not host:
            raise InvalidWindowURIError(f"{text!r}: window URI host must not be empty")
        bad = sorted(set(host) & _FORBIDDEN_HOST_CHARS)
        if bad:
            raise InvalidWindowURIError(
                f"{text!r}: window URI host may not contain {''.join(bad)!r} "
                "(no userinfo, port or escapes)"
            )
        try:
            segments = (
                tuple(unquote(piece, errors="strict") for piece in path.split("/")) if path else ()
            )
        except UnicodeDecodeError:
            raise InvalidWindowURIError(
                f"{text!r}: a path segment's percent-escapes are not valid UTF-8"
            ) from None
        if rest.endswith("/") and path == "":
            segments = ("",)
        return cls(host, segments)

    def __str__(self) -> str:
        """The normalized form: every segment percent-encoded with no safe characters."""
        return self._normalized

    # Organizing a desktop compares and renders each URI several times; quoting the
    # segments again every time made str() the largest cost of organize().
    @functools.cached_property
    def _normalized(self) -> str:
        if not self.segments:
            return _PREFIX + self.host
        return _PREFIX + self.host + "/" + "/".join(quote(s, safe="") for s in self.segments)

    @property
    def path(self) -> str:
        """The decoded path segments joined by ``/`` (lossy if a segment holds ``/``)."""
        return "/".join(self.segments)


def is_window_uri(text: object) -> bool:
    """Whether ``text`` is a window URI a Computer would accept (lenient parse, no log)."""
    if not isinstance(text, str) or not text.startswith(_PREFIX):
        return False
    rest = text[len(_PREFIX) :]
    for sep in "?#":
        rest = rest.split(sep, 1)[0]
    host = rest.partition("/")[0]
    return bool(host) and not (set(host) & _FORBIDDEN_HOST_CHARS)
