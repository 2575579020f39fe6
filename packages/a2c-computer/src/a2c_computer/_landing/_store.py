"""Uploads in progress and where they land (``client:put_blob``, protocol 0.4 §3/§7).

Rules, each refused with 4019 and its ``details.reason`` (messages never name a local path):

* no landing dir configured, or it is gone or unusable: ``forbidden`` (fail closed);
* the first chunk has no ``upload_id``, offset 0 and declares ``total_size`` (1 or more)
  and ``sha256`` (64 hex digits): else ``invalid_declaration`` (``range`` for the offset);
  later chunks declare nothing (``invalid_declaration``);
* a declaration over ``max_upload_bytes``: ``too_large``; more than ``max_concurrent``
  uploads at once: ``busy``; one that does not fit the budget (:mod:`._budget`: blocks on
  disk and files, in all and per Agent): ``too_large`` with ``details.limit`` naming the
  limit, before a byte is written;
* an unknown or expired ``upload_id``, or one another Agent started: ``invalid_upload``;
* ``chunk_offset`` other than the bytes received, more bytes than declared, or ``eof`` short
  of the declared size: ``range`` (the upload is dropped);
* ``blob`` not base64: ``invalid_declaration``; the bytes not hashing to ``sha256``:
  ``integrity``; a write that fails: ``io_error`` (the upload is dropped either way).

Bytes go to ``<dir>/.a2c-partial/<upload_id>.part`` and reach their final name only when
complete and verified, by a hard link that never replaces an existing file. Uploads idle for
``idle_timeout`` seconds, or whose Agent left, are dropped with their partial file.

Decisions are taken on the event loop, in memory (the budget's running sums, no directory
scan per upload); every file-system step runs in one worker thread, in the order it was
asked for, so a chunk's write, a drop and a landing of one upload never overtake each other.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import re
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from a2c_computer._exceptions import ConfigError
from a2c_protocol import BlobWriteError, BlobWriteReason, PutBlobReq, PutBlobRet, to_wire

from ._budget import Budget, Entry, Tally, tally
from ._fs import LandingDir
from ._names import sanitize
from ._settings import LandingSettings
from ._worker import Upload, UploadWork

__all__ = ["LandingStore", "run_reaper"]

logger = logging.getLogger("a2c_computer.landing")

_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
#: A refusal for room re-reads the directory first, unless it was read this recently.
_RESCAN_AFTER = 1.0
_P = ParamSpec("_P")
_T = TypeVar("_T")


class _Refused(Exception):
    def __init__(self, reason: BlobWriteReason, message: str, **details: Any) -> None:
        super().__init__(message)
        self.reason = reason
        self.details = details


class LandingStore:
    """The uploads of one Computer: :meth:`open` at start, :meth:`put` per chunk,
    :meth:`maintain` now and then, :meth:`aclose` at the end."""

    def __init__(
        self, settings: LandingSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self._root = settings.landing_dir.resolve() if settings.landing_dir else None
        self._dir = LandingDir(self._root) if self._root else None
        self._clock = clock
        self._uploads: dict[str, Upload] = {}
        self._budget = Budget(settings)
        self._scanned_at: float | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._work = UploadWork(self._dir) if self._dir else None

    @property
    def root(self) -> Path | None:
        """The landing directory (absolute), None when uploads are refused."""
        return self._root

    @property
    def budget(self) -> Budget:
        """What the landing dir holds and what is reserved (as last counted)."""
        return self._budget

    @property
    def in_progress(self) -> int:
        return len(self._uploads)

    async def open(self) -> None:
        """Check the landing dir, then :meth:`maintain` it once (partial files an earlier run
        left, what it holds, retention). :class:`ConfigError` when a configured dir is
        missing or unusable."""
        if self._dir is None:
            return
        problem = await self._run(self._dir.problem)
        if problem is not None:
            raise ConfigError(problem)
        await self.maintain()

    # ------------------------------------------------------------------ requests

    async def put(self, req: PutBlobReq) -> dict[str, Any]:
        """The ack of one chunk: a ``PutBlobRet`` or a flat 4019 ErrorPayload."""
        self.reap()
        upload: Upload | None = None
        try:
            uid = req.upload_id
            upload = await self._begin(req) if uid is None else self._resume(req, uid)
            return await self._append(upload, req)
        except _Refused as exc:
            logger.info("upload refused: %s (agent %s, reason %s)", exc, req.agent, exc.reason)
            error = BlobWriteError(str(exc), reason=exc.reason.value, details=exc.details or None)
            answer: dict[str, Any] = to_wire(error.to_payload())
            return answer
        except asyncio.CancelledError:  # the handler was cancelled: a write may be lost
            if upload is not None:
                self._drop(upload)
            raise

    async def _begin(self, req: PutBlobReq) -> Upload:
        if self._dir is None:
            raise _Refused(
                BlobWriteReason.FORBIDDEN,
                "no landing dir configured (--landing-dir): uploads are refused",
            )
        total, digest = req.total_size, req.sha256
        if isinstance(total, bool) or not isinstance(total, int) or total < 1:
            raise _Refused(BlobWriteReason.INVALID_DECLARATION, "total_size must be 1 or more")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise _Refused(BlobWriteReason.INVALID_DECLARATION, "sha256 must be 64 hex digits")
        if req.chunk_offset != 0:
            raise _Refused(BlobWriteReason.RANGE, "the first chunk starts at offset 0")
        limit = self.settings.max_upload_bytes
        if total > limit:
            raise _Refused(BlobWriteReason.TOO_LARGE,
                           f"{total} bytes declared, uploads are limited to {limit}",
                           total_size=total, limit="upload_bytes", max=limit)  # fmt: skip
        await self._count_if_stale(req.agent, total)
        # From here to the reservation nothing awaits: two first chunks cannot both take
        # the last room or the last slot.
        if len(self._uploads) >= self.settings.max_concurrent:
            raise _Refused(BlobWriteReason.BUSY, "too many uploads in progress, retry later")
        refusal = self._budget.refusal(req.agent, total)
        if refusal is not None:
            raise _Refused(BlobWriteReason.TOO_LARGE, refusal.message, total_size=total,
                           **refusal.details)  # fmt: skip
        upload_id = secrets.token_hex(16)
        upload = Upload(upload_id=upload_id, agent=req.agent, total_size=total,
                        sha256=digest.lower(), name=sanitize(req.name_hint),
                        last_seen=self._clock())  # fmt: skip
        self._budget.reserve(upload_id, req.agent, total)
        self._uploads[upload_id] = upload
        assert self._work is not None
        try:
            await self._run(self._work.start, upload)
        except OSError as exc:
            self._drop(upload)
            raise self._io_refusal(exc, f"upload {upload.upload_id} of {upload.agent}",
                                     upload.upload_id) from exc  # fmt: skip
        except asyncio.CancelledError:
            self._drop(upload)
            raise
        return upload

    async def _count_if_stale(self, agent: str, total: int) -> None:
        """Count the directory before the first upload, and again before refusing one for
        room when the count is older than a second (files removed since make room)."""
        try:
            if self._scanned_at is None:
                await self._first_scan()
            elif (
                self._budget.refusal(agent, total) is not None
                and self._clock() - self._scanned_at >= _RESCAN_AFTER
            ):
                await self._rescan()
        except OSError as exc:
            raise self._io_refusal(exc, f"agent {agent}") from exc

    async def _first_scan(self) -> None:
        """For a store used without :meth:`open`: the dir is checked and counted once."""
        assert self._dir is not None
        problem = await self._run(self._dir.problem)
        if problem is not None:
            logger.warning("upload refused: %s", problem)
            raise _Refused(BlobWriteReason.FORBIDDEN, "the Computer's landing dir is unusable")
        await self._rescan()

    def _resume(self, req: PutBlobReq, upload_id: str) -> Upload:
        upload = self._uploads.get(upload_id)
        if upload is None or upload.agent != req.agent:
            raise _Refused(BlobWriteReason.INVALID_UPLOAD,
                           "unknown or expired upload: start again at offset 0",
                           upload_id=upload_id)  # fmt: skip
        if req.declares:
            self._drop(upload)
            raise _Refused(BlobWriteReason.INVALID_DECLARATION,
                           "only the first chunk declares total_size, sha256 and name_hint",
                           upload_id=upload_id)  # fmt: skip
        return upload

    async def _append(self, upload: Upload, req: PutBlobReq) -> dict[str, Any]:
        uid = upload.upload_id
        if req.chunk_offset != upload.accepted:
            self._drop(upload)
            raise _Refused(BlobWriteReason.RANGE,
                           f"chunk_offset {req.chunk_offset}, {upload.accepted} bytes received",
                           upload_id=uid)  # fmt: skip
        try:
            data = base64.b64decode(req.blob, validate=True)
        except (binascii.Error, ValueError) as exc:
            self._drop(upload)
            raise _Refused(BlobWriteReason.INVALID_DECLARATION, "blob is not base64",
                           upload_id=uid) from exc  # fmt: skip
        end = upload.accepted + len(data)
        if end > upload.total_size or (req.eof and end != upload.total_size):
            self._drop(upload)
            raise _Refused(BlobWriteReason.RANGE,
                           f"the chunk ends at {end}, {upload.total_size} bytes declared",
                           upload_id=uid)  # fmt: skip
        # Accepted before the write: a chunk sent without waiting for this ack lines up.
        upload.accepted = end
        upload.last_seen = self._clock()
        assert self._work is not None
        try:
            await self._run(self._work.write, upload, data)
        except OSError as exc:
            self._drop(upload)
            raise self._io_refusal(exc, f"upload {upload.upload_id} of {upload.agent}",
                                     upload.upload_id) from exc  # fmt: skip
        if upload.dropped:  # reaped, or its Agent left, while the bytes were written
            raise _Refused(BlobWriteReason.INVALID_UPLOAD,
                           "unknown or expired upload: start again at offset 0",
                           upload_id=uid)  # fmt: skip
        ret = PutBlobRet(upload_id=uid, chunk_offset=req.chunk_offset, req_id=req.req_id)
        if req.eof:
            ret = await self._finish(upload, ret)
        answer: dict[str, Any] = to_wire(ret)
        return answer

    async def _finish(self, upload: Upload, ret: PutBlobRet) -> PutBlobRet:
        self._uploads.pop(upload.upload_id, None)
        upload.dropped = True  # from here on only the landing itself touches its file
        assert self._work is not None
        try:
            landed = await self._run(self._work.finish, upload, not self._uploads)
        except OSError as exc:
            self._budget.release(upload.upload_id)
            raise self._io_refusal(exc, f"upload {upload.upload_id} of {upload.agent}",
                                     upload.upload_id) from exc  # fmt: skip
        except asyncio.CancelledError:  # it lands anyway; the next count sees the file
            self._budget.release(upload.upload_id)
            raise
        if landed is None:
            self._budget.release(upload.upload_id)
            raise _Refused(BlobWriteReason.INTEGRITY,
                           "the bytes received do not match the declared sha256",
                           upload_id=upload.upload_id)  # fmt: skip
        entry, digest = landed
        self._budget.landed(upload.upload_id, entry)
        assert self._root is not None
        final = self._root / entry.name
        logger.info("upload landed: %s (%d bytes, agent %s)", final, upload.total_size,
                    upload.agent)  # fmt: skip
        return PutBlobRet(upload_id=ret.upload_id, chunk_offset=ret.chunk_offset,
                          req_id=ret.req_id, landing_path=str(final),
                          total_size=upload.accepted, sha256=digest)  # fmt: skip

    def _io_refusal(self, exc: OSError, who: str, upload_id: str | None = None) -> _Refused:
        # The cause (with local paths) stays in the Computer's log; the Agent learns only
        # that the Computer could not write, or that there is no landing dir any more.
        logger.warning("upload refused (%s): %s", who, exc)
        details = {"upload_id": upload_id} if upload_id else {}
        if isinstance(exc, FileNotFoundError | NotADirectoryError):
            return _Refused(BlobWriteReason.FORBIDDEN, "the Computer's landing dir is gone",
                            **details)  # fmt: skip
        return _Refused(BlobWriteReason.IO_ERROR, "the Computer could not write", **details)

    # ------------------------------------------------------------------ housekeeping

    def reap(self) -> int:
        """Drop uploads idle longer than ``idle_timeout``; how many."""
        cutoff = self._clock() - self.settings.idle_timeout
        stale = [u for u in self._uploads.values() if u.last_seen < cutoff]
        for upload in stale:
            logger.info("upload %s of %s abandoned: dropped", upload.upload_id, upload.agent)
            self._drop(upload)
        return len(stale)

    def agent_left(self, agent: str) -> None:
        """Drop the uploads of an Agent that left the office (it cannot finish them)."""
        for upload in [u for u in self._uploads.values() if u.agent == agent]:
            logger.info("upload %s dropped: agent %s left", upload.upload_id, agent)
            self._drop(upload)

    async def maintain(self) -> None:
        """Drop idle uploads, sweep orphaned partial files, apply ``retention``, recount."""
        self.reap()
        if self._dir is None or self._work is None:
            return
        owned = {u.part_name for u in self._uploads.values()}
        await self._run(self._dir.sweep_orphans, time.time() - self.settings.idle_timeout, owned)
        await self._rescan()
        if self.settings.retention is not None:
            removed = await self._run(self._work.expire, dict(self._budget.entries),
                                      time.time() - self.settings.retention)  # fmt: skip
            for name in removed:
                self._budget.forget(name)
            if removed:
                logger.info("retention: removed %d landed files older than %gs", len(removed),
                            self.settings.retention)  # fmt: skip

    async def aclose(self) -> None:
        """Drop every upload in progress and stop the worker (the Computer stops)."""
        for upload in list(self._uploads.values()):
            self._drop(upload)
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await asyncio.to_thread(pool.shutdown)

    def _drop(self, upload: Upload) -> None:
        if upload.dropped:
            return
        upload.dropped = True
        self._uploads.pop(upload.upload_id, None)
        self._budget.release(upload.upload_id)
        if self._work is not None:
            self._submit(self._work.discard, upload, not self._uploads)

    async def _rescan(self) -> None:
        assert self._dir is not None
        counted, block = await self._run(self._count, self._dir, dict(self._budget.entries))
        self._budget.adopt(counted, block)
        self._scanned_at = self._clock()

    @staticmethod
    def _count(landing: LandingDir, known: dict[str, Entry]) -> tuple[Tally, int]:
        scan = landing.scan(known)
        return tally(scan.entries, known), scan.block

    def _submit(self, fn: Callable[_P, _T], *args: _P.args, **kw: _P.kwargs) -> Any:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="a2c-landing")
        return self._pool.submit(fn, *args, **kw)

    async def _run(self, fn: Callable[_P, _T], *args: _P.args, **kw: _P.kwargs) -> _T:
        # Shielded: a step once queued always runs (a cancelled wait must not leave a
        # descriptor open or skip a write that later steps count on).
        result: _T = await asyncio.shield(asyncio.wrap_future(self._submit(fn, *args, **kw)))
        return result


async def run_reaper(store: LandingStore) -> None:
    """Housekeeping every so often (requests reap too; this catches quiet times)."""
    interval = min(store.settings.idle_timeout / 2, 60.0)
    if store.settings.retention is not None:
        interval = min(interval, max(store.settings.retention / 2, 1.0))
    while True:
        await asyncio.sleep(interval)
        try:
            await store.maintain()
        except OSError as exc:
            logger.warning("landing dir housekeeping failed: %s", exc)
