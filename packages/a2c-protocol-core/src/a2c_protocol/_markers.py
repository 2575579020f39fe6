"""A2C markers on tool results (0.2.3) and the binary sideband of content items (0.2.1).

Placement rule (spec delta §6.1): markers about the *whole result* live under the result's
``meta``; markers about one *content item* (or an MCP Resource / Tool) live under that
object's ``_meta``. Producers write exactly that; readers accept both spellings at result
level and prefer ``meta``, because serialization paths differ between SDKs.

Result level::

    {"content": [...], "isError": true,
     "meta": {"a2c_cancelled": true, "a2c_cancel_reason": "agent_requested"}}

Content item whose bytes moved out of band (pull them with ``client:get_blob``)::

    {"type": "image", "mimeType": "image/png", "data": "",
     "_meta": {"a2c_blob_handle": "...", "a2c_total_size": 2480113, "a2c_sha256": "..."}}

Everything here is pure: functions take and return plain JSON dicts or
:class:`~a2c_protocol.CallToolResult` values and never mutate their input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from ._codes import ErrorCode
from ._models import CallToolResult, JsonObject

__all__ = [
    "A2C_BLOB_HANDLE",
    "A2C_CANCELLED",
    "A2C_CANCEL_REASON",
    "A2C_SHA256",
    "A2C_TIMEOUT",
    "A2C_TOTAL_SIZE",
    "CANCEL_REASONS",
    "CANCEL_REASON_AGENT_GONE",
    "CANCEL_REASON_AGENT_REQUESTED",
    "CANCEL_REASON_COMPUTER_SHUTDOWN",
    "CANCEL_REASON_SERVER_GONE",
    "LEGACY_CANCELLED_KEY",
    "LEGACY_TIMEOUT_KEY",
    "BlobSideband",
    "blob_sideband_of",
    "cancel_reason_of",
    "cancelled_result",
    "is_cancelled",
    "is_timed_out",
    "result_marker",
    "timeout_result",
    "with_blob_sideband",
    "without_blob_sideband",
]

#: Result-level ``meta`` key: true when the result answers a cancelled call.
A2C_CANCELLED: Final = "a2c_cancelled"
#: Result-level ``meta`` key: why it was cancelled (diagnostic only, carries no logic).
A2C_CANCEL_REASON: Final = "a2c_cancel_reason"
#: Result-level ``meta`` key: true when the call ran out of time.
A2C_TIMEOUT: Final = "a2c_timeout"
#: The only cancel reason 0.2.3 defines: the Agent sent ``server:tool_call_cancel``.
CANCEL_REASON_AGENT_REQUESTED: Final = "agent_requested"
# The reasons below are this implementation's own values; the spec keeps the reason
# diagnostic only ("carries no control logic"), so any peer may ignore them.
#: The calling Agent left its office or disconnected (crashed) with the call in flight;
#: the Server cancelled the call on its behalf.
CANCEL_REASON_AGENT_GONE: Final = "agent_gone"
#: The Computer's link to the Server the call came through went down (a Server stop or
#: a dropped connection): the answer can no longer be delivered, so the call is stopped.
CANCEL_REASON_SERVER_GONE: Final = "server_gone"
#: The Computer itself shut down and the call outlived its grace period.
CANCEL_REASON_COMPUTER_SHUTDOWN: Final = "computer_shutdown"
#: Every cancel reason this implementation writes into ``a2c_cancel_reason``.
CANCEL_REASONS: Final = frozenset(
    {
        CANCEL_REASON_AGENT_REQUESTED,
        CANCEL_REASON_AGENT_GONE,
        CANCEL_REASON_SERVER_GONE,
        CANCEL_REASON_COMPUTER_SHUTDOWN,
    }
)

#: Pre-0.2.3 spelling of :data:`A2C_TIMEOUT` (``meta.timeout``); read for one release.
LEGACY_TIMEOUT_KEY: Final = "timeout"
#: Pre-0.2.3 spelling of :data:`A2C_CANCELLED` used by our 0.2.0 Computer; read for one release.
LEGACY_CANCELLED_KEY: Final = "cancelled"

#: Content-item ``_meta`` key: the handle to pull the item's bytes with ``client:get_blob``.
A2C_BLOB_HANDLE: Final = "a2c_blob_handle"
#: Content-item ``_meta`` key: byte size of the full (decoded) payload.
A2C_TOTAL_SIZE: Final = "a2c_total_size"
#: Content-item ``_meta`` key: lowercase hex SHA-256 of the full (decoded) payload.
A2C_SHA256: Final = "a2c_sha256"

_ITEM_META: Final = "_meta"


# ------------------------------------------------------------------ result level


def _result_metas(result: CallToolResult | Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """The result-level meta objects in reading order: ``meta`` first, then ``_meta``."""
    if isinstance(result, CallToolResult):
        candidates: tuple[Any, ...] = (result.meta,)
    else:
        candidates = (result.get("meta"), result.get("_meta"))
    return tuple(m for m in candidates if isinstance(m, Mapping))


def result_marker(result: CallToolResult | Mapping[str, Any], key: str) -> Any:
    """The value of result-level marker ``key``, read from ``meta`` then ``_meta``.

    Accepts a decoded :class:`CallToolResult` or the raw JSON dict; None when absent.
    """
    for meta in _result_metas(result):
        if key in meta:
            return meta[key]
    return None


def is_cancelled(result: CallToolResult | Mapping[str, Any]) -> bool:
    """Whether ``result`` answers a cancelled call (``a2c_cancelled``, or the 0.2.0 key)."""
    return (
        result_marker(result, A2C_CANCELLED) is True
        or result_marker(result, LEGACY_CANCELLED_KEY) is True
    )


def cancel_reason_of(result: CallToolResult | Mapping[str, Any]) -> str | None:
    """``a2c_cancel_reason`` when it is a string (diagnostic only), else None."""
    reason = result_marker(result, A2C_CANCEL_REASON)
    return reason if isinstance(reason, str) else None


def is_timed_out(result: CallToolResult | Mapping[str, Any]) -> bool:
    """Whether ``result`` reports a timeout (``a2c_timeout``, or the old ``timeout`` key)."""
    return (
        result_marker(result, A2C_TIMEOUT) is True
        or result_marker(result, LEGACY_TIMEOUT_KEY) is True
    )


def _failure(text: str, meta: JsonObject) -> CallToolResult:
    return CallToolResult(content=[{"type": "text", "text": text}], is_error=True, meta=meta)


def cancelled_result(
    text: str = "Tool call cancelled",
    *,
    reason: str = CANCEL_REASON_AGENT_REQUESTED,
    extra: Mapping[str, Any] | None = None,
) -> CallToolResult:
    """The ``isError`` answer to a cancelled ``client:tool_call`` (spec delta §6.2).

    ``extra`` adds result-level keys (e.g. ``mcp_server``); the markers win over it.
    Cancellation has no error code, so none is set.
    """
    meta: JsonObject = dict(extra or {})
    meta.update({A2C_CANCELLED: True, A2C_CANCEL_REASON: reason})
    return _failure(text, meta)


def timeout_result(
    text: str = "Tool call timed out",
    *,
    extra: Mapping[str, Any] | None = None,
) -> CallToolResult:
    """The ``isError`` result of a timed-out call: ``meta.a2c_timeout`` and code 4004.

    Used by Computers for their own timeouts and by Agents for the result they build
    locally when no answer arrived. ``extra`` adds result-level keys; the markers win.
    """
    meta: JsonObject = dict(extra or {})
    meta.update({"error_code": int(ErrorCode.TOOL_TIMEOUT), A2C_TIMEOUT: True})
    return _failure(text, meta)


# ------------------------------------------------------------ content-item level


@attrs.frozen(kw_only=True)
class BlobSideband:
    """The ``_meta`` keys of a content item whose bytes travel by ``client:get_blob``."""

    blob_handle: str
    total_size: int
    sha256: str


def _carrier(item: Mapping[str, Any]) -> tuple[str, ...] | None:
    """Where a binary content item keeps its base64 bytes, as a key path; None if nowhere.

    ``image`` / ``audio``: ``data``; ``resource`` with ``BlobResourceContents``:
    ``resource.blob``. Text items never go out of band.
    """
    kind = item.get("type")
    if kind in ("image", "audio"):
        return ("data",)
    resource = item.get("resource")
    if kind == "resource" and isinstance(resource, Mapping) and "blob" in resource:
        return ("resource", "blob")
    return None


def blob_sideband_of(item: Mapping[str, Any]) -> BlobSideband | None:
    """The sideband of one content item, or None when its bytes are inline.

    A handle with a missing or mistyped size/hash still counts (the pull answer carries
    both again), so it is reported with ``total_size=-1`` / ``sha256=""``; a non-string
    handle is not a sideband.
    """
    meta = item.get(_ITEM_META)
    if not isinstance(meta, Mapping):
        return None
    handle = meta.get(A2C_BLOB_HANDLE)
    if not isinstance(handle, str) or not handle:
        return None
    size = meta.get(A2C_TOTAL_SIZE)
    digest = meta.get(A2C_SHA256)
    return BlobSideband(
        blob_handle=handle,
        total_size=size if isinstance(size, int) and not isinstance(size, bool) else -1,
        sha256=digest if isinstance(digest, str) else "",
    )


def _with_carrier(item: Mapping[str, Any], value: str) -> dict[str, Any]:
    path = _carrier(item)
    if path is None:
        raise ValueError(f"content item of type {item.get('type')!r} carries no binary data")
    out = dict(item)
    if len(path) == 1:
        out[path[0]] = value
    else:
        inner = dict(out[path[0]])
        inner[path[1]] = value
        out[path[0]] = inner
    return out


def with_blob_sideband(item: Mapping[str, Any], sideband: BlobSideband) -> dict[str, Any]:
    """A copy of a binary content item with its bytes moved out of band.

    The inline carrier (``data`` or ``resource.blob``) becomes ``""`` (the item stays a
    valid MCP object) and the three keys go into the item's own ``_meta`` (also for
    embedded resources, never ``resource._meta``). Raises ``ValueError`` for an item that
    has no binary carrier (e.g. text).
    """
    out = _with_carrier(item, "")
    meta = dict(item.get(_ITEM_META) or {})
    meta.update(
        {
            A2C_BLOB_HANDLE: sideband.blob_handle,
            A2C_TOTAL_SIZE: sideband.total_size,
            A2C_SHA256: sideband.sha256,
        }
    )
    out[_ITEM_META] = meta
    return out


def without_blob_sideband(item: Mapping[str, Any], data_base64: str) -> dict[str, Any]:
    """A copy of an out-of-band item with its bytes restored (``data_base64``).

    The three ``a2c_*`` keys are removed from ``_meta``; ``_meta`` itself goes away when
    nothing else was in it. Raises ``ValueError`` for an item with no binary carrier.
    """
    out = _with_carrier(item, data_base64)
    meta = item.get(_ITEM_META)
    if isinstance(meta, Mapping):
        rest = {
            k: v for k, v in meta.items() if k not in (A2C_BLOB_HANDLE, A2C_TOTAL_SIZE, A2C_SHA256)
        }
        if rest:
            out[_ITEM_META] = rest
        else:
            out.pop(_ITEM_META, None)
    return out
