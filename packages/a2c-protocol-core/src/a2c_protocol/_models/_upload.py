"""Uploads (protocol 0.4, and our opt-in extension in 0.2): ``client:put_blob``.

The mirror of ``client:get_blob``: the Agent drives the offsets and declares
``total_size`` / ``sha256`` in the first chunk; the Computer checks them and answers with
the absolute path the file landed at in the last chunk's ack.
"""

from __future__ import annotations

from typing import Final

import attrs

from ._fields import _opt

__all__ = ["PUT_BLOB_EXTENSION", "PutBlobReq", "PutBlobRet"]

#: The name a 0.2 session lists in its connect ``auth.a2c_extensions`` to say it speaks
#: ``client:put_blob`` (docs/compatibility.md); 0.4 sessions speak it by their version.
PUT_BLOB_EXTENSION: Final = "put_blob"


@attrs.frozen(kw_only=True)
class PutBlobReq:
    """``client:put_blob`` request: one chunk of an upload, in order.

    The first chunk has no ``upload_id``, ``chunk_offset`` 0 and the declaration
    (``total_size`` >= 1, ``sha256`` as 64 hex digits, optional ``name_hint``); later chunks
    carry the ``upload_id`` the Computer answered and no declaration. ``chunk_offset`` must
    equal the bytes the Computer has received; ``eof`` marks the last chunk.
    """

    agent: str
    req_id: str
    computer: str
    chunk_offset: int
    eof: bool
    blob: str
    upload_id: str | None = _opt()
    total_size: int | None = _opt()
    sha256: str | None = _opt()
    name_hint: str | None = _opt()

    @property
    def declares(self) -> bool:
        """Whether any declaration field is present (only the first chunk may have them)."""
        return (
            self.total_size is not None or self.sha256 is not None or (self.name_hint is not None)
        )


@attrs.frozen(kw_only=True)
class PutBlobRet:
    """``client:put_blob`` ack: the session id and the offset echoed; the last chunk's
    ack adds where the file landed and the size and SHA-256 the Computer computed."""

    upload_id: str
    chunk_offset: int
    req_id: str
    landing_path: str | None = _opt()
    total_size: int | None = _opt()
    sha256: str | None = _opt()
