"""The spool: tool-result bytes as content-addressed files in one private directory.

Rules (spec §5.5, §17 A6/A8):

* an item is a file named by the SHA-256 of its bytes, written to a temporary name (0600)
  and renamed into place, so a reader never sees half an item; the same bytes spooled again
  restart the item's time-to-live instead of being written twice;
* an item stays for ``ttl`` seconds after it was last spooled; :meth:`Spool.sweep` removes
  expired items and stale temporary files;
* the spool never holds more than ``spool_max_bytes``: the oldest items are evicted first
  to make room, and an item larger than the capacity or ``max_blob_bytes`` is refused;
* a read re-checks the file (present, same size, not expired): otherwise it is ``gone``;
  no file descriptor outlives one call.

Handles, kinds and serving are :mod:`._store`'s; this module knows only files.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import secrets
import shutil
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import attrs

from a2c_computer._exceptions import BlobTooLargeError, BlobUnavailableError, ComputerError

from ._settings import BlobSettings

__all__ = ["Spool", "SpoolUsage", "private_dir"]

logger = logging.getLogger("a2c_computer.blobs")

_TMP_PREFIX = ".tmp-"
_COPY_BLOCK = 1024 * 1024


@attrs.frozen
class SpoolUsage:
    files: int
    bytes: int


def private_dir(path: Path) -> Path:
    """Create ``path`` (0700) or take it if it is this user's plain directory; tighten it."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise ComputerError(f"blob spool {path} is not a plain directory")
    getuid = getattr(os, "getuid", None)
    if getuid is not None:
        if info.st_uid != getuid():
            raise ComputerError(f"blob spool {path} belongs to another user; refusing it")
        if info.st_mode & 0o077:
            path.chmod(0o700)
    return path


class Spool:
    """The items in ``directory`` under ``settings``' limits. Blocking file I/O, thread-safe."""

    def __init__(self, directory: Path, settings: BlobSettings) -> None:
        self.directory = directory
        self.settings = settings
        self._lock = threading.Lock()

    def put_bytes(self, data: bytes) -> tuple[bytes, int]:
        """Spool ``data``; its SHA-256 digest and size."""
        size = len(data)
        self.check_size(size)
        digest = hashlib.sha256(data)
        with self._lock:
            target = self._target(digest.hexdigest())
            if not self._refresh(target, size):
                self._make_room(size)
                tmp = self._tmp_path()
                try:
                    with self._create(tmp) as out:
                        out.write(data)
                    os.replace(tmp, target)
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        tmp.unlink()
        return digest.digest(), size

    def put_file(self, path: str | os.PathLike[str]) -> tuple[bytes, int]:
        """Spool a copy of the file at ``path`` (streamed, hashed while copying)."""
        source = Path(path)
        size = source.stat().st_size
        self.check_size(size)
        with self._lock:
            self._make_room(size)
            tmp = self._tmp_path()
            digest = hashlib.sha256()
            copied = 0
            try:
                with source.open("rb") as src, self._create(tmp) as out:
                    while block := src.read(_COPY_BLOCK):
                        copied += len(block)
                        self.check_size(copied)
                        digest.update(block)
                        out.write(block)
                target = self._target(digest.hexdigest())
                if not self._refresh(target, copied):
                    os.replace(tmp, target)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
        return digest.digest(), copied

    def check_size(self, size: int) -> None:
        if size > self.settings.max_blob_bytes:
            raise BlobTooLargeError(size, self.settings.max_blob_bytes)
        if size > self.settings.spool_max_bytes:
            raise BlobTooLargeError(size, self.settings.spool_max_bytes, "the spool capacity")

    def reader(self, hex_digest: str, size: int) -> Callable[[int, int], bytes]:
        """``read(offset, length)`` of a stored item; BlobUnavailableError (``gone``) if not."""
        path = self._target(hex_digest)
        try:
            info = path.stat()
        except FileNotFoundError:
            raise BlobUnavailableError("gone", "the spooled result is no longer stored") from None
        if info.st_size != size or time.time() - info.st_mtime >= self.settings.ttl:
            raise BlobUnavailableError("gone", "the spooled result expired or changed")

        def read(offset: int, length: int) -> bytes:
            try:
                with path.open("rb") as handle:
                    handle.seek(offset)
                    return handle.read(length)
            except FileNotFoundError:
                raise BlobUnavailableError("gone", "the spooled result was removed") from None

        return read

    def _target(self, hex_digest: str) -> Path:
        return self.directory / hex_digest

    def _tmp_path(self) -> Path:
        return self.directory / f"{_TMP_PREFIX}{secrets.token_hex(8)}"

    @staticmethod
    def _create(path: Path) -> IO[bytes]:
        return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")

    @staticmethod
    def _refresh(target: Path, size: int) -> bool:
        """True when ``target`` already holds these bytes; restarts its time-to-live."""
        try:
            if target.stat().st_size != size:
                return False
            os.utime(target)
        except FileNotFoundError:
            return False
        return True

    def _entries(self) -> list[tuple[float, int, Path]]:
        entries: list[tuple[float, int, Path]] = []
        with os.scandir(self.directory) as it:
            for entry in it:
                if entry.name.startswith(_TMP_PREFIX):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    info = entry.stat(follow_symlinks=False)
                    entries.append((info.st_mtime, info.st_size, Path(entry.path)))
        return entries

    def _make_room(self, size: int) -> None:
        entries = sorted(self._entries())
        used = sum(e[1] for e in entries)
        limit = self.settings.spool_max_bytes
        evicted = 0
        for _, file_size, path in entries:
            if used + size <= limit:
                break
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                evicted += 1
            used -= file_size
        if evicted:
            logger.info(
                "blob spool full: evicted %d oldest item(s) to store %d bytes", evicted, size
            )

    def sweep(self, now: float | None = None, *, stale_tmp_age: float | None = None) -> int:
        """Remove expired items and stale temporary files; returns the items removed."""
        now = time.time() if now is None else now
        ttl = self.settings.ttl
        tmp_age = ttl if stale_tmp_age is None else stale_tmp_age
        removed = 0
        with self._lock, os.scandir(self.directory) as it:
            for entry in it:
                try:
                    age = now - entry.stat(follow_symlinks=False).st_mtime
                    if entry.name.startswith(_TMP_PREFIX):
                        if age >= tmp_age:
                            os.unlink(entry.path)
                    elif age >= ttl:
                        os.unlink(entry.path)
                        removed += 1
                except FileNotFoundError:
                    continue
        return removed

    def usage(self) -> SpoolUsage:
        """Items and bytes currently spooled."""
        entries = self._entries()
        return SpoolUsage(files=len(entries), bytes=sum(e[1] for e in entries))

    def clear(self) -> None:
        """Remove every item."""
        with self._lock:
            shutil.rmtree(self.directory, ignore_errors=True)
            private_dir(self.directory)
