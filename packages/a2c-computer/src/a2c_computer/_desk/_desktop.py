"""Desktop rules: window metadata, the organize algorithm, rendering, change detection.

Rules (desktop-and-windows.md §2, §4-§6):

* a window is a resource whose URI parses as ``window://`` (lenient: query/fragment
  dropped with a WARN; identity = normalized host + path); metadata comes only from
  ``annotations.priority`` (float in [0, 1], else WARN + 0.0), ``annotations.audience``
  (no ``"assistant"`` → WARN, still included) and ``_meta.fullscreen`` (boolean) — never
  from the URI;
* directed fetch (0.2.3, spec delta §8): a ``window`` keeps exactly the windows whose raw
  ``Resource.uri`` equals it, character for character (no normalization; duplicates
  across servers all match), *before* organizing; no match is an empty desktop;
* organize: ``size <= 0`` → ``[]``; drop windows without contents, invalid URIs and
  blob-only windows; group by MCP server; servers in
  order of most recent tool use (newest first), then the rest alphabetically; inside a
  server priority descending, stable; a server with a fullscreen window contributes only
  its earliest-listed fullscreen window; the global ``size`` cap is checked before every
  append;
* render: ``"<uri>\\n\\n<text blocks joined by \\n\\n>"``, or the bare URI when no text;
  blobs are skipped with a WARN;
* change detection: ``resources/list_changed`` refreshes only when the set of window URIs
  changed; ``resources/updated`` refreshes at once for a window URI, never otherwise.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from a2c_protocol import (
    InvalidWindowURIError,
    JsonObject,
    WindowURI,
    read_fullscreen,
    read_priority,
)

__all__ = [
    "CallRecord",
    "WindowInfo",
    "describe_window",
    "host_collisions",
    "is_reverse_dns",
    "list_changed_needs_refresh",
    "organize",
    "render_window",
    "select_window",
    "updated_needs_refresh",
    "window_uri_set",
]

logger = logging.getLogger("a2c_computer.desktop")

_REVERSE_DNS: Final = re.compile(
    r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+"
)


@attrs.frozen
class WindowInfo:
    """A window as discovered: owner server, normalized URI and its metadata."""

    server: str
    uri: WindowURI
    resource: JsonObject
    priority: float
    fullscreen: bool

    @property
    def key(self) -> str:
        """The normalized URI string (computed once by :class:`WindowURI`)."""
        return str(self.uri)


@attrs.frozen
class CallRecord:
    """One tool call in the history (owning MCP server, not the alias)."""

    server: str
    tool: str
    req_id: str
    timestamp: float
    success: bool


def _parse_window(uri: object) -> WindowURI | None:
    if not isinstance(uri, str) or not uri.startswith("window://"):
        return None
    try:
        return WindowURI.parse(uri, lenient=True)
    except InvalidWindowURIError as exc:
        logger.warning("resource %r is not a valid window URI (%s); skipped", uri, exc)
        return None


def describe_window(server: str, resource: Mapping[str, Any]) -> WindowInfo | None:
    """The window view of one raw MCP resource, or None if it is not a window.

    Logs the WARNs of the metadata rules (query dropped, bad priority, bad fullscreen,
    audience without ``assistant``).
    """
    raw_uri = resource.get("uri")
    uri = _parse_window(raw_uri)
    if uri is None:
        return None
    annotations = resource.get("annotations")
    annotations = annotations if isinstance(annotations, Mapping) else {}
    meta = resource.get("_meta")
    meta = meta if isinstance(meta, Mapping) else {}
    priority = read_priority(annotations.get("priority"), uri=str(raw_uri))
    fullscreen = read_fullscreen(meta.get("fullscreen"), uri=str(raw_uri))
    audience = annotations.get("audience")
    if audience is not None and (not isinstance(audience, list) or "assistant" not in audience):
        logger.warning(
            "window %s (MCP server %s): audience %r lacks 'assistant'; included anyway",
            raw_uri,
            server,
            audience,
        )
    return WindowInfo(server, uri, dict(resource), priority, fullscreen)


def _text_blocks(contents: Sequence[Mapping[str, Any]], uri: object) -> list[str] | None:
    """Texts of the contents; None when the window is blob-only (to be dropped).

    ``uri`` is only formatted when there is something to warn about.
    """
    texts = [text for item in contents if isinstance(text := item.get("text"), str)]
    blobs = len(contents) - len(texts)
    if blobs:
        logger.warning("window %s: %d blob content(s) are not rendered", uri, blobs)
        if not texts:
            return None
    return texts


def render_window(uri: WindowURI, contents: Sequence[Mapping[str, Any]]) -> str:
    """One desktop entry: the normalized URI, then the non-empty text blocks."""
    key = str(uri)
    rendered = _rendered(key, contents, uri)
    return key if rendered is None else rendered


def _rendered(key: str, contents: Sequence[Mapping[str, Any]], uri: object) -> str | None:
    """The entry for ``contents`` under ``key``; None when the window is blob-only."""
    if len(contents) == 1 and isinstance(text := contents[0].get("text"), str):
        return _entry(key, text)  # the usual window: one text block, no list
    texts = _text_blocks(contents, uri)
    return None if texts is None else _entry(key, "\n\n".join(t for t in texts if t))


def _entry(key: str, body: str) -> str:
    return f"{key}\n\n{body}" if body else key


def _is_window(info: WindowInfo, window: str) -> bool:
    return info.resource.get("uri") == window


def select_window(infos: Sequence[WindowInfo], window: str | None) -> list[WindowInfo]:
    """The windows a ``client:get_desktop`` asks for: all, or those whose raw URI is ``window``.

    Exact string equality with ``Resource.uri`` (spec delta §8, A14): no normalization, so
    ``window://h/p?x=1`` does not match ``window://h/p``. Run before reading contents.
    """
    if window is None:
        return list(infos)
    return [info for info in infos if _is_window(info, window)]


def organize(
    windows: Sequence[tuple[WindowInfo, Sequence[Mapping[str, Any]] | None]],
    size: int | None,
    history: Sequence[CallRecord],
    window: str | None = None,
) -> list[str]:
    """The desktop: rendered windows in organized order (see the module rules).

    ``windows`` are ``(info, contents)`` pairs in enumeration order (servers' listing order);
    ``contents`` is the ``resources/read`` result's ``contents`` (None if the read failed).
    """
    if size is not None and size <= 0:
        return []
    # Each window is rendered once, here (a blob-only window is warned about once, not
    # once per pass). Entries sort as plain tuples: (-priority, enumeration position) is
    # the order the rules ask for, and the position is unique, so the comparison never
    # reaches the text. No list per window: with 10,000 windows, the garbage collector's
    # passes over short-lived containers were a fifth of the time.
    groups: dict[str, list[tuple[float, int, str]]] = {}
    first_fullscreen: dict[str, tuple[float, int, str]] = {}
    for pos, (info, contents) in enumerate(windows):
        if window is not None and not _is_window(info, window):
            continue
        if not contents:
            continue
        rendered = _rendered(info.key, contents, info.uri)
        if rendered is None:
            continue
        entry = (-info.priority, pos, rendered)
        group = groups.get(info.server)
        if group is None:
            groups[info.server] = [entry]
        else:
            group.append(entry)
        if info.fullscreen and info.server not in first_fullscreen:
            first_fullscreen[info.server] = entry  # enumeration order: the first one wins
    order: list[str] = []
    for record in reversed(history):
        if record.server in groups and record.server not in order:
            order.append(record.server)
    order += sorted(s for s in groups if s not in order)
    out: list[str] = []
    for server in order:
        full = first_fullscreen.get(server)
        chosen = [full] if full is not None else sorted(groups[server])
        for _, _, rendered in chosen:
            if size is not None and len(out) >= size:
                return out
            out.append(rendered)
    return out


def window_uri_set(resources: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """Normalized window URIs among raw resources (no logging)."""
    keys: set[str] = set()
    for resource in resources:
        uri = resource.get("uri")
        if not isinstance(uri, str) or not uri.startswith("window://"):
            continue
        try:
            keys.add(str(WindowURI.parse(uri.split("?", 1)[0].split("#", 1)[0])))
        except InvalidWindowURIError:
            continue
    return frozenset(keys)


def list_changed_needs_refresh(cached: frozenset[str] | None, current: frozenset[str]) -> bool:
    """After ``resources/list_changed``: refresh only if the window set changed."""
    return cached is None or cached != current


def updated_needs_refresh(uri: str) -> bool:
    """After ``resources/updated``: refresh at once for a window URI, ignore others."""
    return isinstance(uri, str) and uri.startswith("window://") and _parse_window_quiet(uri)


def _parse_window_quiet(uri: str) -> bool:
    try:
        WindowURI.parse(uri.split("?", 1)[0].split("#", 1)[0])
    except InvalidWindowURIError:
        return False
    return True


def is_reverse_dns(host: str) -> bool:
    """Whether a host looks like reverse-DNS (``org.example.editor``: lowercase, dotted)."""
    return _REVERSE_DNS.fullmatch(host) is not None


def host_collisions(hosts_by_server: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """Window hosts used by more than one MCP server → the servers using them (sorted)."""
    users: dict[str, set[str]] = {}
    for server, hosts in hosts_by_server.items():
        for host in hosts:
            users.setdefault(host, set()).add(server)
    return {h: sorted(s) for h, s in sorted(users.items()) if len(s) > 1}
