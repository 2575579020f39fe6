"""Pulling one blob in chunks (spec §5.5, §5.9): pure logic over an injected fetch.

Rules:

* the first chunk (offset 0) gives ``total_size``, ``sha256`` and ``mime_type`` and the
  Computer's effective chunk size; the rest is fetched by absolute offset, at most
  ``max_in_flight`` requests at once, each range re-asked until covered (a Computer may
  clamp any chunk);
* every chunk must carry the first chunk's ``total_size`` and ``sha256``; a change means the
  source was rewritten, and the read restarts from offset 0 (never splicing versions);
* 4018 ``range`` restarts from offset 0; every other 4018 reason is raised as the typed
  :class:`~a2c_protocol.BlobNotAccessibleError` at once (no retry);
* after the last byte the SHA-256 of the whole is compared; a mismatch restarts; after
  ``attempts`` reads :class:`BlobIntegrityError` is raised;
* malformed answers (bad base64, wrong offset, a chunk past the end, an empty chunk
  before ``eof``) raise :class:`InvalidResponseError`;
* ``max_bytes`` refuses a blob whose ``total_size`` is larger, after the first chunk.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
from collections.abc import Awaitable, Callable

import attrs

from a2c_agent._exceptions import BlobIntegrityError, BlobLimitError, InvalidResponseError
from a2c_protocol import BlobNotAccessibleError, BlobReason, GetBlobRet

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "DEFAULT_MAX_IN_FLIGHT",
    "BlobData",
    "FetchChunk",
    "ProgressFn",
    "pull_blob",
]

DEFAULT_CHUNK_BYTES = 256 * 1024
DEFAULT_MAX_IN_FLIGHT = 4

#: ``fetch(chunk_offset, max_chunk_bytes) -> GetBlobRet``; raises the typed 4018 error.
FetchChunk = Callable[[int, int], Awaitable[GetBlobRet]]
#: ``progress(bytes_received, total_size)``.
ProgressFn = Callable[[int, int], None]


@attrs.frozen
class BlobData:
    """A whole blob, verified against its ``sha256``."""

    data: bytes = attrs.field(repr=lambda d: f"<{len(d)} bytes>")
    mime_type: str
    sha256: str

    @property
    def size(self) -> int:
        return len(self.data)


class _Restart(Exception):
    """Start over at offset 0: the source changed, an offset was refused, or the digest
    did not match (``expected``/``actual`` then say how)."""

    def __init__(self, expected: str = "", actual: str = "") -> None:
        self.expected = expected
        self.actual = actual


def _decode(ret: GetBlobRet, offset: int, total: int) -> bytes:
    if ret.chunk_offset != offset:
        raise InvalidResponseError(
            f"blob chunk: asked for offset {offset}, got chunk_offset {ret.chunk_offset}"
        )
    try:
        data = base64.b64decode(ret.blob, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidResponseError(f"blob chunk at {offset}: blob is not base64") from exc
    end = offset + len(data)
    if end > total:
        raise InvalidResponseError(f"blob chunk at {offset} runs past total_size {total}")
    if ret.eof != (end == total):
        raise InvalidResponseError(f"blob chunk at {offset}: eof={ret.eof} but ends at {end}")
    return data


async def _fetch(fetch: FetchChunk, offset: int, size: int) -> GetBlobRet:
    try:
        return await fetch(offset, size)
    except BlobNotAccessibleError as exc:
        if exc.reason == BlobReason.RANGE:
            raise _Restart() from exc
        raise


async def _first_exception(coros: list[Awaitable[None]]) -> None:
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        pending: set[asyncio.Future[None]] = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                if task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _read_once(
    fetch: FetchChunk,
    chunk_bytes: int,
    max_in_flight: int,
    max_bytes: int | None,
    progress: ProgressFn | None,
) -> BlobData:
    first = await _fetch(fetch, 0, chunk_bytes)
    total, digest = first.total_size, first.sha256
    if total < 0:
        raise InvalidResponseError(f"blob total_size {total} is negative")
    if max_bytes is not None and total > max_bytes:
        raise BlobLimitError(total, max_bytes)
    head = _decode(first, 0, total)
    if not head and not first.eof:
        raise InvalidResponseError("blob chunk at 0 is empty but not eof")
    buf = bytearray(total)
    buf[: len(head)] = head
    received = len(head)
    if progress is not None:
        progress(received, total)

    async def fill(start: int, end: int, gate: asyncio.Semaphore) -> None:
        nonlocal received
        async with gate:
            offset = start
            while offset < end:
                ret = await _fetch(fetch, offset, end - offset)
                if (ret.total_size, ret.sha256) != (total, digest):
                    raise _Restart()
                piece = _decode(ret, offset, total)[: end - offset]
                if not piece:
                    raise InvalidResponseError(f"blob chunk at {offset} is empty but not eof")
                buf[offset : offset + len(piece)] = piece
                offset += len(piece)
                received += len(piece)
                if progress is not None:
                    progress(received, total)

    stride = len(head)
    if stride < total:
        gate = asyncio.Semaphore(max_in_flight)
        await _first_exception(
            [fill(off, min(off + stride, total), gate) for off in range(stride, total, stride)]
        )
    actual = hashlib.sha256(buf).hexdigest()
    if actual != digest.lower():
        raise _Restart(digest, actual)
    return BlobData(data=bytes(buf), mime_type=first.mime_type, sha256=actual)


async def pull_blob(
    fetch: FetchChunk,
    *,
    handle: str = "",
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    max_bytes: int | None = None,
    attempts: int = 3,
    progress: ProgressFn | None = None,
) -> BlobData:
    """Every byte of one blob, verified; see the module rules for errors and restarts."""
    if chunk_bytes <= 0 or max_in_flight <= 0 or attempts <= 0:
        raise ValueError("chunk_bytes, max_in_flight and attempts must be positive")
    last = _Restart()
    for _ in range(attempts):
        try:
            return await _read_once(fetch, chunk_bytes, max_in_flight, max_bytes, progress)
        except _Restart as exc:
            last = exc
    raise BlobIntegrityError(
        handle,
        last.expected or "(source changed during every read)",
        last.actual or "(incomplete)",
        attempts,
    )
