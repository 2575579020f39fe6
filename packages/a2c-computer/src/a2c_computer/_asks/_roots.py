"""Roots: the Computer answers an MCP server's ``roots/list`` itself, from its configuration.

Roots name directories on the machine where the MCP server runs, the Computer's: an Agent
elsewhere cannot know them, so they are never asked of the Agent. A server entry's
``roots`` (absolute paths, ``~`` expanded, or ``file://`` URIs) are its roots; a server
without ``roots`` is not offered the capability at all (its ``roots/list`` is refused as
before). The list is read at each request, so a reload that changes it answers the next
request with the new list (a server whose entry gains or loses ``roots`` is restarted, to
declare the capability anew).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from a2c_protocol import JsonObject

__all__ = ["root_problem", "roots_json"]


def root_problem(entry: str) -> str | None:
    """What is wrong with one configured root (None: fine)."""
    if entry.startswith("file://"):
        path = unquote(urlsplit(entry).path)
        return None if PurePosixPath(path).is_absolute() else "a file:// URI needs a path"
    if "://" in entry:
        return "a root is a directory: an absolute path or a file:// URI"
    if not Path(entry).expanduser().is_absolute():
        return f"{entry!r} is not an absolute path"
    return None


def roots_json(roots: list[str]) -> list[JsonObject]:
    """MCP ``Root`` objects (``uri``, ``name``) of a server's configured roots."""
    out: list[JsonObject] = []
    for entry in roots:
        if entry.startswith("file://"):
            uri = entry
            name = PurePosixPath(unquote(urlsplit(entry).path)).name
        else:
            path = Path(entry).expanduser()
            uri, name = path.as_uri(), path.name
        out.append({"uri": uri, "name": name or uri})
    return out
