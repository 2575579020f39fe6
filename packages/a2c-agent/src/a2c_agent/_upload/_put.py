"""The request side of :mod:`a2c_agent._upload._push`: what ``AsyncAgent.put_blob`` runs."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from a2c_agent._core import new_req_id
from a2c_agent._rpc._blobpull import DEFAULT_CHUNK_BYTES
from a2c_protocol import Event, PutBlobReq, PutBlobRet

from ._push import Declaration, Landed, Source, UploadProgress, encode, push_blob

__all__ = ["put_blob"]

#: ``ask(event, request, answer type)``: one acked request of a connected agent.
Ask = Callable[[Event, Any, type[PutBlobRet]], Awaitable[PutBlobRet]]


async def put_blob(
    ask: Ask,
    agent: str,
    computer: str,
    source: Source,
    name_hint: str | None,
    progress: UploadProgress | None,
) -> Landed:
    """Upload ``source`` to ``computer`` as ``agent`` (see :meth:`AsyncAgent.put_blob`)."""
    if name_hint is None and isinstance(source, str | os.PathLike):
        name_hint = Path(source).name

    async def send(
        upload_id: str | None, offset: int, eof: bool, chunk: bytes, first: Declaration | None
    ) -> PutBlobRet:
        request = PutBlobReq(
            agent=agent, req_id=new_req_id(), computer=computer, chunk_offset=offset,
            eof=eof, blob=encode(chunk), upload_id=upload_id,
            total_size=first.total_size if first else None,
            sha256=first.sha256 if first else None,
            name_hint=name_hint if first else None,
        )  # fmt: skip
        return await ask(Event.PUT_BLOB, request, PutBlobRet)

    return await push_blob(send, source, chunk_bytes=DEFAULT_CHUNK_BYTES, progress=progress)
