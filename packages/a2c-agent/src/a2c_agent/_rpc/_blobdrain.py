"""Restoring the bytes of tool-result items that travel by handle (spec §5.8, §17 A9).

Rules:

* every content item whose ``_meta`` holds ``a2c_blob_handle`` is pulled from the same
  Computer (``pull`` is injected), verified, and its carrier (``data`` or
  ``resource.blob``) refilled with base64; the ``a2c_*`` keys stay in ``_meta`` so callers
  can see the item travelled out of band;
* items are drained in order while the total stays within ``max_bytes``; an item that
  would pass it, or whose pull fails, is left untouched (handle and empty carrier) with
  ``_meta.a2c_blob_error`` saying why, and a WARN log line; the tool result itself is
  never lost because of one item;
* then each ``structuredContent`` string the Computer emptied because it duplicated a
  restored item (``meta.a2c_structured_refs``) gets that item's base64 back and the
  marker goes; references to items left unrestored stay;
* the input is never mutated.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable

import attrs

from a2c_protocol import (
    A2CError,
    CallToolResult,
    JsonObject,
    blob_sideband_of,
    restore_structured_refs,
    without_blob_sideband,
)

from ._blobpull import BlobData

__all__ = ["BLOB_ERROR_KEY", "PullFn", "drain_result", "needs_drain"]

logger = logging.getLogger("a2c_agent.blobs")

#: ``_meta`` key the Agent adds to an item it could not restore (never sent on the wire).
BLOB_ERROR_KEY = "a2c_blob_error"

#: ``pull(handle, max_bytes) -> BlobData``.
PullFn = Callable[[str, int | None], Awaitable[BlobData]]


def _failed(item: JsonObject, reason: str) -> JsonObject:
    meta = dict(item.get("_meta") or {})
    meta[BLOB_ERROR_KEY] = reason
    return {**item, "_meta": meta}


def needs_drain(result: CallToolResult) -> bool:
    """Whether any content item of ``result`` travelled by blob handle (checked on every
    call before anything is awaited: most results have none)."""
    for item in result.content:  # a plain loop: a generator costs more than the check
        if isinstance(item, dict) and blob_sideband_of(item) is not None:
            return True
    return False


async def drain_result(
    result: CallToolResult, pull: PullFn, *, max_bytes: int | None = None
) -> CallToolResult:
    """``result`` with the bytes of its out-of-band items restored (see module rules)."""
    content: list[JsonObject] = []
    remaining = max_bytes
    changed = False
    for index, item in enumerate(result.content):
        sideband = blob_sideband_of(item) if isinstance(item, dict) else None
        if sideband is None:
            content.append(item)
            continue
        changed = True
        if remaining is not None and sideband.total_size > remaining:
            reason = (
                f"not drained: {sideband.total_size} bytes would pass the drain limit "
                f"({remaining} of {max_bytes} bytes left)"
            )
            logger.warning("tool result item %d %s; pull it with read_blob()", index, reason)
            content.append(_failed(item, reason))
            continue
        try:
            blob = await pull(sideband.blob_handle, remaining)
        except A2CError as exc:
            why = getattr(exc, "reason", None)
            reason = f"{type(exc).__name__}: {exc}" + (f" (reason: {why})" if why else "")
            logger.warning("tool result item %d could not be restored: %s", index, reason)
            content.append(_failed(item, reason))
            continue
        if remaining is not None:
            remaining -= blob.size
        restored = without_blob_sideband(item, base64.b64encode(blob.data).decode("ascii"))
        restored["_meta"] = dict(item["_meta"])
        content.append(restored)
    if not changed:
        return result
    return restore_structured_refs(attrs.evolve(result, content=content))
