"""Pushing one upload in chunks (``client:put_blob``): pure logic over an injected send.

Rules:

* the source (bytes, a file path, or an async iterator of bytes, spooled to a temporary
  file first) is hashed before the first chunk: the first chunk declares ``total_size``
  and ``sha256`` (and the name hint), the later ones only carry the ``upload_id`` the
  first ack gave;
* chunks go one at a time, each after the previous ack (the protocol's in-order pacing),
  of at most ``chunk_bytes`` raw bytes (the size our blob pulls ask for);
* the last chunk's ack must say where the file landed and echo the declared size and
  digest, else :class:`~a2c_agent.InvalidResponseError`;
* every 4019 raises :class:`~a2c_protocol.BlobWriteError` at once (``reason`` says why;
  a retry is a new upload from offset 0); an empty source is refused before sending.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import os
import tempfile
from collections.abc import AsyncIterable, Awaitable, Callable
from pathlib import Path
from typing import IO, TypeAlias

import attrs

from a2c_agent._exceptions import InvalidResponseError
from a2c_protocol import PutBlobRet

__all__ = ["Declaration", "Landed", "SendChunk", "Source", "UploadProgress", "push_blob"]

#: What :meth:`AsyncAgent.put_blob` uploads: bytes, a file, or an async stream of bytes.
Source: TypeAlias = bytes | str | os.PathLike[str] | AsyncIterable[bytes]
#: ``send(upload_id, chunk_offset, eof, chunk, declaration) -> PutBlobRet``; the
#: declaration is given for the first chunk only.
SendChunk = Callable[[str | None, int, bool, bytes, "Declaration | None"], Awaitable[PutBlobRet]]
#: ``progress(bytes_sent, total_size)``.
UploadProgress = Callable[[int, int], None]

_SPOOL_IN_MEMORY = 8 * 1024 * 1024


@attrs.frozen
class Landed:
    """Where an upload landed on the Computer (an absolute path there) and what landed."""

    landing_path: str
    total_size: int
    sha256: str


@attrs.frozen
class Declaration:
    """What the first chunk declares about the whole upload."""

    total_size: int
    sha256: str


def _digest(stream: IO[bytes], chunk_bytes: int) -> Declaration:
    hasher = hashlib.sha256()
    size = 0
    while block := stream.read(chunk_bytes):
        hasher.update(block)
        size += len(block)
    stream.seek(0)
    return Declaration(total_size=size, sha256=hasher.hexdigest())


async def _open(source: Source) -> IO[bytes]:
    """A readable stream of the source; the caller closes it (``with``)."""
    if isinstance(source, bytes):
        return io.BytesIO(source)
    if isinstance(source, str | os.PathLike):
        return await asyncio.to_thread(Path(source).open, "rb")
    spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)  # noqa: SIM115 - returned
    async for block in source:
        spool.write(block)
    spool.seek(0)
    return spool


async def push_blob(
    send: SendChunk,
    source: Source,
    *,
    chunk_bytes: int,
    progress: UploadProgress | None = None,
) -> Landed:
    """Upload ``source`` through ``send``; the landing path and what the Computer checked."""
    with await _open(source) as stream:
        declared = await asyncio.to_thread(_digest, stream, chunk_bytes)
        if declared.total_size == 0:
            raise ValueError("nothing to upload: the source is empty")
        upload_id: str | None = None
        offset = 0
        while True:
            chunk = stream.read(chunk_bytes)
            eof = offset + len(chunk) >= declared.total_size
            if not chunk and not eof:
                raise ValueError("the source shrank while it was uploaded")
            ack = await send(upload_id, offset, eof, chunk, declared if upload_id is None else None)
            if ack.chunk_offset != offset or (upload_id is not None and ack.upload_id != upload_id):
                raise InvalidResponseError(
                    f"put_blob ack: sent offset {offset} of upload {upload_id}, got "
                    f"{ack.chunk_offset} of {ack.upload_id}"
                )
            upload_id = ack.upload_id
            offset += len(chunk)
            if progress is not None:
                progress(offset, declared.total_size)
            if eof:
                return _landed(ack, declared)


def _landed(ack: PutBlobRet, declared: Declaration) -> Landed:
    if not ack.landing_path:
        raise InvalidResponseError("put_blob: the last ack names no landing_path")
    if ack.sha256 is not None and ack.sha256.lower() != declared.sha256:
        raise InvalidResponseError(
            f"put_blob: the Computer computed sha256 {ack.sha256}, {declared.sha256} was sent"
        )
    if ack.total_size is not None and ack.total_size != declared.total_size:
        raise InvalidResponseError(
            f"put_blob: the Computer kept {ack.total_size} bytes, {declared.total_size} were sent"
        )
    return Landed(landing_path=ack.landing_path, total_size=declared.total_size,
                  sha256=declared.sha256)  # fmt: skip


def encode(chunk: bytes) -> str:
    return base64.b64encode(chunk).decode("ascii")
