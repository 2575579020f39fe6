"""The binary sideband of tool results (spec §5.8) and the size of encoded answers.

Rules:

* binary items are ``image`` and ``audio`` (carrier ``data``) and ``resource`` items whose
  ``resource`` holds a ``blob``; their size is the decoded byte count;
* an item up to the inline budget stays as it is; a larger one is spooled, its carrier
  is set to ``""`` (the MCP schema stays valid) and the item's own ``_meta`` gains
  ``a2c_blob_handle``, ``a2c_total_size`` and ``a2c_sha256``; the MIME type stays in the
  item's ``mimeType``;
* an item whose carrier is not valid base64 is left alone (the size check still applies);
* over the absolute cap the spooler raises :class:`BlobTooLargeError` and the caller turns
  the whole result into an ``isError`` result (§17 A7);
* an answer's encoded size is measured exactly as python-socketio serializes it (compact
  JSON, ASCII escapes), so "fits the message limit" is decided before anything is sent.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

import attrs

from a2c_protocol import BlobSideband, CallToolResult, JsonObject, with_blob_sideband

from ._store import BlobInfo

__all__ = [
    "ANSWER_MARGIN",
    "Spooler",
    "chunk_budget",
    "decoded_size",
    "encoded_size",
    "offload_binaries",
]

#: Bytes kept free below the message limit for Socket.IO/Engine.IO framing (packet type,
#: namespace, ack id) and packets that share one HTTP long-polling request.
ANSWER_MARGIN = 16 * 1024

#: ``spooler(data, mime_type) -> BlobInfo``; raises BlobTooLargeError over the cap.
Spooler = Callable[[bytes, str], BlobInfo]


def encoded_size(data: Any) -> int:
    """Bytes of ``data`` as one Socket.IO ack argument (compact, ASCII-escaped JSON)."""
    return len(json.dumps([data], separators=(",", ":")))


def decoded_size(text: str) -> int:
    """Decoded length of base64 ``text`` without decoding it (an upper bound if invalid)."""
    stripped = text.rstrip("=")
    return len(stripped) * 3 // 4


def chunk_budget(max_message_bytes: int, envelope_bytes: int) -> int:
    """The most raw bytes whose base64 fits one answer next to an envelope of that size."""
    room = max_message_bytes - ANSWER_MARGIN - envelope_bytes
    return max(room // 4 * 3, 1)


def _carrier(item: JsonObject) -> tuple[JsonObject, str, str] | None:
    """``(holder, key, mime)`` of a binary item's base64 carrier, or None."""
    kind = item.get("type")
    if kind in ("image", "audio") and isinstance(item.get("data"), str):
        return item, "data", str(item.get("mimeType") or "application/octet-stream")
    resource = item.get("resource")
    if kind == "resource" and isinstance(resource, dict) and isinstance(resource.get("blob"), str):
        return resource, "blob", str(resource.get("mimeType") or "application/octet-stream")
    return None


def _offload_item(item: JsonObject, inline_budget: int, spool: Spooler) -> JsonObject:
    found = _carrier(item)
    if found is None:
        return item
    holder, key, mime = found
    text = holder[key]
    if decoded_size(text) <= inline_budget:
        return item
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return item
    if len(data) <= inline_budget:
        return item
    info = spool(data, mime)
    sideband = BlobSideband(blob_handle=info.handle, total_size=info.size, sha256=info.sha256)
    return with_blob_sideband(item, sideband)


def offload_binaries(result: CallToolResult, inline_budget: int, spool: Spooler) -> CallToolResult:
    """``result`` with every binary item above ``inline_budget`` moved to the sideband."""
    content = [_offload_item(item, inline_budget, spool) for item in result.content]
    if all(new is old for new, old in zip(content, result.content, strict=True)):
        return result
    return attrs.evolve(result, content=content)
