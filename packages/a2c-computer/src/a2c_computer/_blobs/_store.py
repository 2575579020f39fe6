"""The Computer's blob store: handles, a content-addressed spool and chunk reads.

Rules (spec §5.2-§5.6, §17 A6/A8):

* tool-result bytes are spooled as files named by their SHA-256 in a private directory
  (0700, owned by this user; refused otherwise), written atomically; the directory belongs
  to one Computer process (by default its own ``<name>-<pid>-<random>``; a given one is
  locked and refused to a second process) and is removed by :meth:`BlobStore.close`, so
  handles live as long as the process that minted them;
* a spooled item stays servable for ``ttl`` seconds after it was last minted; sweeps on
  open and on a timer remove expired items and stale temporary files; the spool never
  holds more than ``spool_max_bytes`` (oldest items are evicted first to make room);
* each resolution re-checks the source (stat, size, age): a missing, changed or expired
  file is ``gone``; offsets outside ``0..total_size`` are ``range``; a handle that does not
  verify is ``invalid_handle``;
* other producers (e.g. skills) register their own *kind* with a resolver that re-applies
  their authorization on every pull and mint handles with :meth:`BlobStore.mint`;
* no file descriptor outlives one call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import secrets
import shutil
import stat
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import attrs

from a2c_computer._exceptions import BlobTooLargeError, BlobUnavailableError, ComputerError
from a2c_computer._workdirs import OwnedDir, per_process_name, sweep_stale

from ._handles import HandleCodec
from ._settings import BlobSettings, default_cache_root

__all__ = ["BlobChunk", "BlobInfo", "BlobResolver", "BlobSource", "BlobStore", "SpoolUsage"]

logger = logging.getLogger("a2c_computer.blobs")

_SPOOL_KIND = "spool"
_TMP_PREFIX = ".tmp-"
_KEY_FILE = "handle.key"
#: What the store creates in its directory (removed on close).
_CONTENTS = ("data", _KEY_FILE)
_COPY_BLOCK = 1024 * 1024


@attrs.frozen
class BlobInfo:
    """What a producer puts into its response for one stored item."""

    handle: str
    size: int
    sha256: str
    mime_type: str


@attrs.frozen
class BlobSource:
    """A resolved handle: the whole resource's facts plus a reader of byte ranges.

    ``read(offset, length)`` returns exactly ``length`` bytes or raises
    :class:`BlobUnavailableError` (``gone``) when the source vanished or changed.
    """

    size: int
    sha256: str
    mime_type: str
    read: Callable[[int, int], bytes]


@attrs.frozen
class BlobChunk:
    """One chunk of a resolved source, at an absolute offset."""

    size: int
    sha256: str
    mime_type: str
    offset: int
    data: bytes
    eof: bool


@attrs.frozen
class SpoolUsage:
    files: int
    bytes: int


#: ``resolver(payload) -> BlobSource``; raises BlobUnavailableError to refuse.
BlobResolver = Callable[[bytes], BlobSource]


def _private_dir(path: Path) -> Path:
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


def _safe_segment(name: str) -> str:
    readable = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:48]
    return f"{readable}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:12]}"


class BlobStore:
    """Blob handles and the spool of one Computer (``owner`` is its name).

    Call :meth:`open` before use (creates and locks the directory, makes the key, sweeps)
    and :meth:`close` at the end (removes it all); run :meth:`run_sweeper` as a task to
    keep sweeping. The methods are blocking file I/O:
    from async code call the large ones (``put_*``, ``sweep``) through a thread.
    """

    def __init__(self, settings: BlobSettings | None = None, *, owner: str) -> None:
        self.settings = settings or BlobSettings()
        self.owner = owner
        base = self.settings.spool_dir
        # One directory per process by default: two Computers with one name never share a
        # key or spool, and each removes its own on exit.
        self.directory = (
            base
            if base is not None
            else default_cache_root()
            / "a2c-computer"
            / "blobs"
            / per_process_name(_safe_segment(owner))
        )
        self._owned: OwnedDir | None = None
        self._data = self.directory / "data"
        self._codec: HandleCodec | None = None
        self._resolvers: dict[str, BlobResolver] = {_SPOOL_KIND: self._resolve_spool}
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------

    def open(self) -> None:
        """Create the private directory and the handle key; remove stale and expired files."""
        if self._codec is not None:
            return
        if self.settings.spool_dir is None:
            _private_dir(self.directory.parent.parent)
        _private_dir(self.directory)
        self._owned = OwnedDir.claim(
            self.directory, _CONTENTS, what="blob spool",
            hint="give each Computer its own --blob-spool-dir (or leave it unset)",
        )  # fmt: skip
        try:
            if self.settings.spool_dir is None:
                stale = sweep_stale(self.directory.parent, _CONTENTS, keep=self.directory)
                if stale:
                    logger.info("blob spool: removed %d left by Computers that died", stale)
            _private_dir(self._data)
            self._codec = HandleCodec(self._load_key(), self.owner)
        except BaseException:
            self.close()
            raise
        removed = self.sweep(stale_tmp_age=0.0)
        usage = self.usage()
        logger.info(
            "blob spool %s: %d item(s), %d bytes (removed %d expired)",
            self.directory,
            usage.files,
            usage.bytes,
            removed,
        )

    def close(self) -> None:
        """Remove the spool (items, key, lock; the directory when empty). Idempotent."""
        self._codec = None
        if self._owned is not None:
            self._owned.release()
            self._owned = None

    def _load_key(self) -> bytes:
        path = self.directory / _KEY_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            key = path.read_bytes()
            if len(key) < 32:
                raise ComputerError(f"blob handle key {path} is damaged; delete it") from None
            return key
        key = secrets.token_bytes(32)
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
        return key

    async def run_sweeper(self) -> None:
        """Sweep every ``sweep_interval`` seconds until cancelled."""
        interval = self.settings.effective_sweep_interval
        while True:
            await asyncio.sleep(interval)
            try:
                removed = await asyncio.to_thread(self.sweep)
            except OSError as exc:
                logger.warning("blob spool sweep failed: %s", exc)
                continue
            if removed:
                logger.info("blob spool: removed %d expired item(s)", removed)

    # -- producers -------------------------------------------------------------

    def _codec_or_fail(self) -> HandleCodec:
        if self._codec is None:
            raise ComputerError("the blob store is not open")
        return self._codec

    def register_kind(self, kind: str, resolver: BlobResolver) -> None:
        """Serve handles of ``kind`` (minted with :meth:`mint`) through ``resolver``."""
        if kind in self._resolvers:
            raise ValueError(f"blob kind {kind!r} is already registered")
        self._resolvers[kind] = resolver

    def mint(self, kind: str, payload: bytes) -> str:
        """A handle for a registered ``kind``; ``payload`` is opaque to everyone but you."""
        if kind not in self._resolvers or kind == _SPOOL_KIND:
            raise ValueError(f"blob kind {kind!r} is not registered")
        return self._codec_or_fail().mint(kind, payload)

    def put_bytes(self, data: bytes, mime_type: str) -> BlobInfo:
        """Spool ``data`` (content-addressed) and return its handle and facts."""
        size = len(data)
        self._check_size(size)
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
        return self._info(digest.digest(), size, mime_type)

    def put_file(self, path: str | os.PathLike[str], mime_type: str) -> BlobInfo:
        """Spool a copy of the file at ``path`` (streamed, hashed while copying)."""
        source = Path(path)
        size = source.stat().st_size
        self._check_size(size)
        with self._lock:
            self._make_room(size)
            tmp = self._tmp_path()
            digest = hashlib.sha256()
            copied = 0
            try:
                with source.open("rb") as src, self._create(tmp) as out:
                    while block := src.read(_COPY_BLOCK):
                        copied += len(block)
                        self._check_size(copied)
                        digest.update(block)
                        out.write(block)
                target = self._target(digest.hexdigest())
                if not self._refresh(target, copied):
                    os.replace(tmp, target)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
        return self._info(digest.digest(), copied, mime_type)

    def _check_size(self, size: int) -> None:
        if size > self.settings.max_blob_bytes:
            raise BlobTooLargeError(size, self.settings.max_blob_bytes)
        if size > self.settings.spool_max_bytes:
            raise BlobTooLargeError(size, self.settings.spool_max_bytes, "the spool capacity")

    def _info(self, digest: bytes, size: int, mime_type: str) -> BlobInfo:
        payload = digest + struct.pack(">Q", size) + mime_type.encode("utf-8")
        handle = self._codec_or_fail().mint(_SPOOL_KIND, payload)
        return BlobInfo(handle=handle, size=size, sha256=digest.hex(), mime_type=mime_type)

    def _target(self, hex_digest: str) -> Path:
        return self._data / hex_digest

    def _tmp_path(self) -> Path:
        return self._data / f"{_TMP_PREFIX}{secrets.token_hex(8)}"

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
        with os.scandir(self._data) as it:
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

    # -- maintenance -----------------------------------------------------------

    def sweep(self, now: float | None = None, *, stale_tmp_age: float | None = None) -> int:
        """Remove expired items and stale temporary files; returns the items removed."""
        now = time.time() if now is None else now
        ttl = self.settings.ttl
        tmp_age = ttl if stale_tmp_age is None else stale_tmp_age
        removed = 0
        with self._lock, os.scandir(self._data) as it:
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
        """Remove every spooled item (the key stays, so live handles become ``gone``)."""
        with self._lock:
            shutil.rmtree(self._data, ignore_errors=True)
            _private_dir(self._data)

    # -- serving ---------------------------------------------------------------

    def resolve(self, handle: object) -> BlobSource:
        """The source behind ``handle``; raises BlobUnavailableError with its reason."""
        opened = self._codec_or_fail().open(handle)
        if opened is None:
            raise BlobUnavailableError("invalid_handle", "unknown or malformed blob handle")
        kind, payload = opened
        resolver = self._resolvers.get(kind)
        if resolver is None:
            raise BlobUnavailableError("invalid_handle", "unknown blob handle kind")
        return resolver(payload)

    def read_chunk(self, handle: object, offset: int, max_bytes: int) -> BlobChunk:
        """``max_bytes`` (at least 1) bytes at absolute ``offset`` of ``handle``'s source."""
        return self.chunk_of(self.resolve(handle), offset, max_bytes)

    @staticmethod
    def chunk_of(source: BlobSource, offset: int, max_bytes: int) -> BlobChunk:
        """Like :meth:`read_chunk`, for a source already resolved."""
        if offset < 0 or offset > source.size:
            raise BlobUnavailableError(
                "range", f"chunk_offset {offset} is outside 0..{source.size}"
            )
        length = min(max(max_bytes, 1), source.size - offset)
        data = source.read(offset, length) if length else b""
        if len(data) != length:
            raise BlobUnavailableError("gone", "the blob changed while it was read")
        return BlobChunk(
            size=source.size,
            sha256=source.sha256,
            mime_type=source.mime_type,
            offset=offset,
            data=data,
            eof=offset + length == source.size,
        )

    def _resolve_spool(self, payload: bytes) -> BlobSource:
        if len(payload) < 40:
            raise BlobUnavailableError("invalid_handle", "malformed blob handle")
        digest, (size,), mime = payload[:32], struct.unpack(">Q", payload[32:40]), payload[40:]
        path = self._target(digest.hex())
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

        return BlobSource(
            size=size, sha256=digest.hex(), mime_type=mime.decode("utf-8", "replace"), read=read
        )
