"""Answering ``client:get_blob`` (spec §5.4): one chunk, or a 4018 with its reason.

Rules, in order: the handle must verify and name a known kind (``invalid_handle``); the
producer's resolver re-applies its authorization (``forbidden``) and finds the source
(``gone``); ``chunk_offset`` must lie in ``0..total_size`` (``range``; ``total_size``
itself gives an empty chunk with ``eof``); the chunk is ``max_chunk_bytes`` clamped to the
configured chunk size and to what fits one answer under the message limit once base64
and the envelope are added; ``total_size``, ``sha256``, ``mime_type`` describe the whole
resource in every chunk. A ``max_chunk_bytes`` below 1 is a 400.
"""

from __future__ import annotations

import base64
from typing import Any

from a2c_computer._exceptions import BlobUnavailableError
from a2c_protocol import (
    BlobNotAccessibleError,
    ErrorCode,
    ErrorPayload,
    GetBlobReq,
    GetBlobRet,
    to_wire,
)

from ._sideband import chunk_budget, encoded_size
from ._store import BlobStore

__all__ = ["serve_get_blob"]


def serve_get_blob(store: BlobStore, req: GetBlobReq) -> dict[str, Any]:
    """The wire answer to one ``client:get_blob`` request (blocking file I/O)."""
    settings = store.settings
    if req.max_chunk_bytes is not None and req.max_chunk_bytes < 1:
        bad: dict[str, Any] = to_wire(
            ErrorPayload(code=ErrorCode.BAD_REQUEST, message="max_chunk_bytes must be at least 1")
        )
        return bad
    offset = req.chunk_offset or 0
    try:
        source = store.resolve(req.blob_handle)
        envelope = GetBlobRet(
            blob_handle=req.blob_handle,
            mime_type=source.mime_type,
            total_size=source.size,
            sha256=source.sha256,
            chunk_offset=offset,
            eof=False,
            blob="",
            req_id=req.req_id,
        )
        fits = chunk_budget(settings.max_message_bytes, encoded_size(to_wire(envelope)))
        wanted = req.max_chunk_bytes or settings.chunk_bytes
        chunk = store.chunk_of(source, offset, min(wanted, settings.chunk_bytes, fits))
    except BlobUnavailableError as exc:
        refusal: dict[str, Any] = to_wire(
            BlobNotAccessibleError(str(exc), reason=exc.reason).to_payload()
        )
        return refusal
    answer: dict[str, Any] = to_wire(
        GetBlobRet(
            blob_handle=req.blob_handle,
            mime_type=chunk.mime_type,
            total_size=chunk.size,
            sha256=chunk.sha256,
            chunk_offset=chunk.offset,
            eof=chunk.eof,
            blob=base64.b64encode(chunk.data).decode("ascii"),
            req_id=req.req_id,
        )
    )
    return answer
