"""Uploads in progress and where they land (``client:put_blob``, protocol 0.4 §3/§7).

Rules, each refused with 4019 and its ``details.reason``:

* no landing dir configured, or it is not a writable directory: ``forbidden`` (fail closed);
* the first chunk has no ``upload_id``, offset 0 and declares ``total_size`` (1 or more)
  and ``sha256`` (64 hex digits): else ``invalid_declaration`` (``range`` for the offset);
  later chunks declare nothing (``invalid_declaration``);
* a declaration over ``max_upload_bytes``, or that would take the directory plus the uploads
  in progress over ``max_total_bytes``: ``too_large``, before a byte is written;
* more than ``max_concurrent`` uploads at once: ``busy``;
* an unknown or expired ``upload_id``, or one another Agent started: ``invalid_upload``;
* ``chunk_offset`` other than the bytes received, more bytes than declared, or ``eof`` short
  of the declared size: ``range`` (the upload is dropped);
* ``blob`` not base64: ``invalid_declaration``; the bytes not hashing to ``sha256``:
  ``integrity``; a write that fails: ``io_error`` (the upload is dropped either way).

Bytes go to ``<dir>/.a2c-partial/<upload_id>.part`` and reach their final name only when
complete and verified, by a hard link that never replaces an existing file. Uploads idle for
``idle_timeout`` seconds, or whose Agent left, are dropped with their partial file; an empty
partial directory is removed, so an abandoned upload leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import logging
import os
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from a2c_protocol import BlobWriteError, BlobWriteReason, PutBlobReq, PutBlobRet, to_wire

from ._names import PARTIAL_DIR, candidates, sanitize
from ._settings import LandingSettings

__all__ = ["LandingStore", "run_reaper"]

logger = logging.getLogger("a2c_computer.landing")

_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


class _Refused(Exception):
    def __init__(self, reason: BlobWriteReason, message: str, **details: Any) -> None:
        super().__init__(message)
        self.reason = reason
        self.details = details


@attrs.define
class _Upload:
    upload_id: str
    agent: str
    total_size: int
    sha256: str
    name: str
    part: Path
    file: BinaryIO
    hasher: Any = attrs.field(factory=hashlib.sha256)
    received: int = 0
    last_seen: float = 0.0


class LandingStore:
    """The uploads of one Computer; every method answers at once (no awaits inside)."""

    def __init__(
        self, settings: LandingSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self._root = settings.landing_dir.resolve() if settings.landing_dir else None
        self._clock = clock
        self._uploads: dict[str, _Upload] = {}

    @property
    def root(self) -> Path | None:
        """The landing directory (absolute), None when uploads are refused."""
        return self._root

    @property
    def in_progress(self) -> int:
        return len(self._uploads)

    def problem(self) -> str | None:
        """Why uploads cannot land now (for ``check`` and the first refusal), else None."""
        if self._root is None:
            return "no landing dir configured (--landing-dir): uploads are refused"
        if not self._root.is_dir():
            return f"landing dir {self._root} is not a directory"
        if not os.access(self._root, os.W_OK | os.X_OK):
            return f"landing dir {self._root} is not writable"
        return None

    # ------------------------------------------------------------------ requests

    def put(self, req: PutBlobReq) -> dict[str, Any]:
        """The ack of one chunk: a ``PutBlobRet`` or a flat 4019 ErrorPayload."""
        self.reap()
        try:
            uid = req.upload_id
            upload = self._begin(req) if uid is None else self._resume(req, uid)
            return self._append(upload, req)
        except _Refused as exc:
            logger.info("upload refused: %s (agent %s, reason %s)", exc, req.agent, exc.reason)
            error = BlobWriteError(str(exc), reason=exc.reason.value, details=exc.details or None)
            answer: dict[str, Any] = to_wire(error.to_payload())
            return answer

    def _begin(self, req: PutBlobReq) -> _Upload:
        problem = self.problem()
        if problem is not None:
            raise _Refused(BlobWriteReason.FORBIDDEN, problem)
        assert self._root is not None
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
                           total_size=total, limit=limit)  # fmt: skip
        available = self.settings.max_total_bytes - self._used()
        if total > available:
            raise _Refused(BlobWriteReason.TOO_LARGE,
                           f"{total} bytes declared, the landing dir has room for {available}",
                           total_size=total, available=max(available, 0))  # fmt: skip
        if len(self._uploads) >= self.settings.max_concurrent:
            raise _Refused(BlobWriteReason.BUSY, "too many uploads in progress, retry later")
        upload_id = secrets.token_hex(16)
        part = self._root / PARTIAL_DIR / f"{upload_id}.part"
        try:
            part.parent.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            logger.warning("cannot start an upload in %s: %s", self._root, exc)
            raise _Refused(BlobWriteReason.IO_ERROR, "the Computer could not write") from exc
        upload = _Upload(upload_id=upload_id, agent=req.agent, total_size=total,
                         sha256=digest.lower(), name=sanitize(req.name_hint), part=part,
                         file=os.fdopen(fd, "wb"))  # fmt: skip
        self._uploads[upload_id] = upload
        return upload

    def _resume(self, req: PutBlobReq, upload_id: str) -> _Upload:
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

    def _append(self, upload: _Upload, req: PutBlobReq) -> dict[str, Any]:
        uid = upload.upload_id
        if req.chunk_offset != upload.received:
            self._drop(upload)
            raise _Refused(BlobWriteReason.RANGE,
                           f"chunk_offset {req.chunk_offset}, {upload.received} bytes received",
                           upload_id=uid)  # fmt: skip
        try:
            data = base64.b64decode(req.blob, validate=True)
        except (binascii.Error, ValueError) as exc:
            self._drop(upload)
            raise _Refused(BlobWriteReason.INVALID_DECLARATION, "blob is not base64",
                           upload_id=uid) from exc  # fmt: skip
        end = upload.received + len(data)
        if end > upload.total_size or (req.eof and end != upload.total_size):
            self._drop(upload)
            raise _Refused(BlobWriteReason.RANGE,
                           f"the chunk ends at {end}, {upload.total_size} bytes declared",
                           upload_id=uid)  # fmt: skip
        try:
            upload.file.write(data)
        except OSError as exc:
            self._drop(upload)
            logger.warning("upload %s: write failed: %s", uid, exc)
            raise _Refused(BlobWriteReason.IO_ERROR, "the Computer could not write",
                           upload_id=uid) from exc  # fmt: skip
        upload.hasher.update(data)
        upload.received = end
        upload.last_seen = self._clock()
        ret = PutBlobRet(upload_id=uid, chunk_offset=req.chunk_offset, req_id=req.req_id)
        if req.eof:
            ret = self._finish(upload, ret)
        answer: dict[str, Any] = to_wire(ret)
        return answer

    def _finish(self, upload: _Upload, ret: PutBlobRet) -> PutBlobRet:
        self._uploads.pop(upload.upload_id, None)
        digest = upload.hasher.hexdigest()
        try:
            upload.file.close()
            if digest != upload.sha256:
                raise _Refused(BlobWriteReason.INTEGRITY,
                               "the bytes received do not match the declared sha256",
                               upload_id=upload.upload_id)  # fmt: skip
            final = self._land(upload)
        except OSError as exc:
            logger.warning("upload %s: cannot land: %s", upload.upload_id, exc)
            raise _Refused(BlobWriteReason.IO_ERROR, "the Computer could not write",
                           upload_id=upload.upload_id) from exc  # fmt: skip
        finally:
            self._remove_part(upload)
        logger.info("upload landed: %s (%d bytes, agent %s)", final, upload.total_size,
                    upload.agent)  # fmt: skip
        return attrs.evolve(ret, landing_path=str(final), total_size=upload.received,
                            sha256=digest)  # fmt: skip

    def _land(self, upload: _Upload) -> Path:
        assert self._root is not None
        for name in candidates(upload.name):
            final = self._root / name
            if final.parent != self._root:  # pragma: no cover - sanitize() forbids it
                raise OSError(f"refusing a name outside the landing dir: {name!r}")
            try:
                os.link(upload.part, final)  # never replaces: EEXIST instead
            except FileExistsError:
                continue
            return final
        raise AssertionError("unreachable")  # pragma: no cover - candidates() never ends

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

    def sweep_orphans(self) -> int:
        """Remove partial files older than ``idle_timeout`` that no upload owns (left by an
        earlier run that died); how many."""
        if self._root is None:
            return 0
        partial = self._root / PARTIAL_DIR
        owned = {u.part for u in self._uploads.values()}
        cutoff = time.time() - self.settings.idle_timeout
        removed = 0
        try:
            entries = list(os.scandir(partial))
        except OSError:
            return 0
        for entry in entries:
            path = Path(entry.path)
            try:
                if path not in owned and entry.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except OSError as exc:
                logger.warning("cannot remove partial upload %s: %s", path, exc)
        self._tidy()
        return removed

    def close(self) -> None:
        """Drop every upload in progress (the Computer stops)."""
        for upload in list(self._uploads.values()):
            self._drop(upload)

    def _drop(self, upload: _Upload) -> None:
        self._uploads.pop(upload.upload_id, None)
        try:
            upload.file.close()
        except OSError:  # pragma: no cover - closing a file we only wrote to
            pass
        self._remove_part(upload)

    def _remove_part(self, upload: _Upload) -> None:
        try:
            upload.part.unlink(missing_ok=True)
        except OSError as exc:
            logger.warning("cannot remove partial upload %s: %s", upload.part, exc)
        self._tidy()

    def _tidy(self) -> None:
        if self._root is not None and not self._uploads:
            try:
                (self._root / PARTIAL_DIR).rmdir()
            except OSError:
                pass  # absent, or a file some other process put there: leave it

    def _used(self) -> int:
        """Bytes of the regular files directly in the landing dir plus uploads declared."""
        assert self._root is not None
        used = sum(u.total_size for u in self._uploads.values())
        try:
            with os.scandir(self._root) as entries:
                for entry in entries:
                    if entry.is_file(follow_symlinks=False):
                        used += entry.stat(follow_symlinks=False).st_size
        except OSError:
            pass
        return used


async def run_reaper(store: LandingStore) -> None:
    """Drop abandoned uploads every so often (requests reap too; this catches quiet times)."""
    interval = min(store.settings.idle_timeout / 2, 60.0)
    while True:
        await asyncio.sleep(interval)
        store.reap()
