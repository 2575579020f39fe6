"""Resource URIs the MCP host sees for the windows of each Computer's desktop.

A window ``window://org.example.term/session/3`` of Computer ``build box`` is served as
``a2c://build%20box/window://org.example.term/session/3``: the Computer's name,
percent-encoded with nothing kept, is the authority; the window URI follows verbatim, so
the host can read both and the bridge asks the Computer for exactly that window.

A desktop entry is ``"<window URI>\\n\\n<text>"`` (or the bare URI); :func:`split_entry`
takes it apart.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote, unquote

__all__ = ["SCHEME", "parse_uri", "served_uri", "split_entry"]

SCHEME: Final = "a2c"
_PREFIX: Final = f"{SCHEME}://"
_WINDOW: Final = "window://"


def served_uri(computer: str, window_uri: str) -> str:
    """The URI a window of ``computer`` is served under."""
    return f"{_PREFIX}{quote(computer, safe='')}/{window_uri}"


def parse_uri(uri: str) -> tuple[str, str] | None:
    """(computer, window URI) of a served URI, or None when it is not one."""
    if not uri.startswith(_PREFIX):
        return None
    authority, slash, window = uri[len(_PREFIX) :].partition("/")
    if not slash or not authority or not window.startswith(_WINDOW):
        return None
    if len(window) == len(_WINDOW):
        return None
    return unquote(authority), window


def split_entry(entry: str) -> tuple[str, str]:
    """(window URI, text) of one rendered desktop entry."""
    uri, _, text = entry.partition("\n\n")
    return uri, text
