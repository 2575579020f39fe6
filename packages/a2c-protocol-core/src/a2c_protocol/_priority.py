"""Window metadata in v0.2, and the explicit v0.1 → v0.2 migration.

Rules (desktop-and-windows.md §2 and §7):

* ``annotations.priority`` is a float in [0, 1]; missing/None means 0.0. An out-of-range,
  non-numeric, boolean, NaN or infinite value is invalid: lenient readers (the Computer)
  log a WARN and use 0.0, strict readers raise.
* ``_meta.fullscreen`` is a boolean; missing/None means False; any other type counts as
  False with a WARN.
* v0.1 priorities were integers in [0, 100]; the explicit conversion is ``p / 100``
  (100 → 1.0, 80 → 0.8, 50 → 0.5, 30 → 0.3, 0 → 0.0). There is no automatic migration:
  code that loads v0.1 data calls :func:`priority_from_v01` or :func:`migrate_v01_window`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any, Final
from urllib.parse import parse_qsl

from ._exceptions import InvalidPriorityError, InvalidWindowURIError
from ._models import JsonObject
from ._window import WindowURI

__all__ = [
    "DEFAULT_PRIORITY",
    "migrate_v01_window",
    "priority_from_v01",
    "read_fullscreen",
    "read_priority",
    "window_resource",
]

logger = logging.getLogger("a2c_protocol.window")

DEFAULT_PRIORITY: Final = 0.0
_TRUE_FLAGS: Final = frozenset({"1", "true", "yes", "on"})
_FALSE_FLAGS: Final = frozenset({"0", "false", "no", "off", ""})


def read_priority(value: object, *, strict: bool = False, uri: str | None = None) -> float:
    """The v0.2 priority for ``annotations.priority`` (None → 0.0).

    Lenient (default): invalid values log a WARN and give 0.0. Strict: they raise
    :class:`InvalidPriorityError`.
    """
    if value is None:
        return DEFAULT_PRIORITY
    problem: str | None = None
    if isinstance(value, bool) or not isinstance(value, int | float):
        problem = f"must be a number in [0, 1], got {type(value).__name__} {value!r}"
    elif not math.isfinite(value) or not 0.0 <= value <= 1.0:
        hint = " (a v0.1 integer? convert with priority_from_v01)" if 1 < value <= 100 else ""
        problem = f"must be in [0, 1], got {value!r}{hint}"
    if problem is None:
        return float(value)  # type: ignore[arg-type]
    if strict:
        raise InvalidPriorityError(f"priority {problem}")
    logger.warning("window %s: priority %s; using 0.0", uri or "?", problem)
    return DEFAULT_PRIORITY


def read_fullscreen(value: object, *, uri: str | None = None) -> bool:
    """The v0.2 ``_meta.fullscreen`` flag (None → False; a non-boolean → False + WARN)."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    logger.warning(
        "window %s: _meta.fullscreen must be a boolean, got %r; using false", uri or "?", value
    )
    return False


def priority_from_v01(value: int) -> float:
    """Convert a stored v0.1 integer priority in [0, 100] to the v0.2 float (``value / 100``).

    Raises :class:`InvalidPriorityError` for anything else. Authors whose v0.1 values
    meant something else (an informal 0-10 scale: 8 meaning "high") should re-map by
    meaning instead, e.g. pass ``mapping=lambda p: p / 10`` to :func:`migrate_v01_window`.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidPriorityError(f"a v0.1 priority is an integer in [0, 100], got {value!r}")
    if not 0 <= value <= 100:
        raise InvalidPriorityError(f"a v0.1 priority is an integer in [0, 100], got {value}")
    return value / 100


def migrate_v01_window(
    uri: str, *, mapping: Callable[[int], float] = priority_from_v01
) -> tuple[str, JsonObject, JsonObject]:
    """Split a v0.1 window URI into ``(pure v0.2 URI, annotations, _meta)``.

    ``window://h/p?priority=80&fullscreen=1`` → ``("window://h/p", {"priority": 0.8},
    {"fullscreen": True})``. Keys absent from the query are absent from the result.
    Raises :class:`InvalidPriorityError` / :class:`InvalidWindowURIError` on bad input.
    """
    base, _, query = uri.partition("?")
    query = query.split("#", 1)[0]
    parsed = WindowURI.parse(base.split("#", 1)[0])
    annotations: JsonObject = {}
    meta: JsonObject = {}
    for key, raw in parse_qsl(query, keep_blank_values=True):
        if key == "priority":
            try:
                number = int(raw)
            except ValueError:
                raise InvalidPriorityError(
                    f"v0.1 priority must be an integer, got {raw!r}"
                ) from None
            converted = mapping(number)
            annotations["priority"] = read_priority(converted, strict=True)
        elif key == "fullscreen":
            flag = raw.strip().lower()
            if flag not in _TRUE_FLAGS | _FALSE_FLAGS:
                raise InvalidWindowURIError(
                    f"v0.1 fullscreen flag must be 0/1/true/false, got {raw!r}"
                )
            meta["fullscreen"] = flag in _TRUE_FLAGS
        else:
            logger.warning("v0.1 window %r: unknown query key %r dropped", uri, key)
    return str(parsed), annotations, meta


def window_resource(
    uri: str | WindowURI,
    name: str,
    *,
    priority: float | None = None,
    audience: Sequence[str] = ("assistant",),
    last_modified: str | None = None,
    fullscreen: bool | None = None,
    description: str | None = None,
    mime_type: str | None = "text/plain",
    extra_meta: JsonObject | None = None,
) -> JsonObject:
    """A v0.2-conformant MCP ``Resource`` (plain JSON) for an MCP server to list.

    Refuses v0.1 forms: a query/fragment in the URI, an integer-style priority such as
    ``80``, or a non-boolean ``fullscreen``. ``audience`` defaults to ``["assistant"]``
    because windows are rendered for the Agent.
    """
    parsed = uri if isinstance(uri, WindowURI) else WindowURI.parse(uri)
    resource: dict[str, Any] = {"uri": str(parsed), "name": name}
    if description is not None:
        resource["description"] = description
    if mime_type is not None:
        resource["mimeType"] = mime_type
    annotations: JsonObject = {}
    if priority is not None:
        annotations["priority"] = read_priority(priority, strict=True)
    if audience:
        roles = list(audience)
        bad = [r for r in roles if r not in ("assistant", "user")]
        if bad:
            raise ValueError(f"audience entries must be 'assistant' or 'user', got {bad}")
        annotations["audience"] = roles
    if last_modified is not None:
        annotations["lastModified"] = last_modified
    if annotations:
        resource["annotations"] = annotations
    meta: JsonObject = dict(extra_meta or {})
    if fullscreen is not None:
        if not isinstance(fullscreen, bool):
            raise ValueError(f"fullscreen must be a boolean, got {fullscreen!r}")
        meta["fullscreen"] = fullscreen
    if meta:
        resource["_meta"] = meta
    return resource
