"""``AsyncAgent.put_blob``: the request side of :mod:`a2c_agent._upload._push`."""

from __future__ import annotations

import os
from pathlib import Path

from a2c_agent._core import AgentCore, _req_id
from a2c_agent._rpc._blobpull import DEFAULT_CHUNK_BYTES
from a2c_protocol import Event, PutBlobReq, PutBlobRet

from ._push import Declaration, Landed, Source, UploadProgress, encode, push_blob

__all__ = ["UploadMixin"]


class UploadMixin(AgentCore):
    """Uploads to a Computer over ``client:put_blob``."""

    async def put_blob(
        self,
        computer: str,
        source: Source,
        name_hint: str | None = None,
        progress: UploadProgress | None = None,
    ) -> Landed:
        """Upload ``source`` (bytes, a file path or an async iterator of bytes) to
        ``computer``'s landing dir; returns where it landed (a path on the Computer, to
        hand to its tools) with the size and SHA-256 both sides checked.

        ``name_hint`` suggests the file name (a path's own name by default); the Computer
        makes it safe and never overwrites. Chunks go one at a time, each after the
        previous ack; ``progress(sent, total)`` is called after each. Raises
        :class:`~a2c_protocol.BlobWriteError` (4019, ``reason``: ``forbidden`` when the
        Computer takes no uploads, ``too_large``, ``busy``, ``integrity``, ...).
        """
        if name_hint is None and isinstance(source, str | os.PathLike):
            name_hint = Path(source).name

        async def send(
            upload_id: str | None, offset: int, eof: bool, chunk: bytes, first: Declaration | None
        ) -> PutBlobRet:
            request = PutBlobReq(
                agent=self._name, req_id=_req_id(), computer=computer, chunk_offset=offset,
                eof=eof, blob=encode(chunk), upload_id=upload_id,
                total_size=first.total_size if first else None,
                sha256=first.sha256 if first else None,
                name_hint=name_hint if first else None,
            )  # fmt: skip
            return await self._ask(Event.PUT_BLOB, request, PutBlobRet)

        return await push_blob(send, source, chunk_bytes=DEFAULT_CHUNK_BYTES, progress=progress)
