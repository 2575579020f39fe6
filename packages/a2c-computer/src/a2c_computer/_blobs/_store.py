"""The Computer's blob store: handles, the kinds they name, and chunk reads.

Rules (spec §5.2-§5.6, §17 A6/A8):

* tool-result bytes go to the spool (:mod:`._spool`: content-addressed files, ttl,
  capacity) in a private directory (0700, owned by this user; refused otherwise) that
  belongs to one Computer process (by default its own ``<name>-<pid>-<random>``; a given
  one is locked and refused to a second process) and is removed by :meth:`BlobStore.close`,
  so handles live as long as the process that minted them;
* sweeps on open and on a timer remove expired items and stale temporary files;
* each resolution re-checks the source (the spool's file: present, same size, not
  expired): otherwise it is ``gone``; offsets outside ``0..total_size`` are ``range``; a
  handle that does not verify is ``invalid_handle``;
* other producers (e.g. skills) register their own *kind* with a resolver that re-applies
  their authorization on every pull and mint handles with :meth:`BlobStore.mint`;
* no file descriptor outlives one call.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import secrets
import struct
from collections.abc import Callable

import attrs

from a2c_computer._exceptions import BlobUnavailableError, ComputerError
from a2c_computer._workdirs import OwnedDir, per_process_name, sweep_stale

from ._handles import HandleCodec
from ._settings import BlobSettings, default_cache_root
from ._spool import Spool, SpoolUsage, private_dir

__all__ = ["BlobChunk", "BlobInfo", "BlobResolver", "BlobSource", "BlobStore", "SpoolUsage"]

logger = logging.getLogger("a2c_computer.blobs")

_SPOOL_KIND = "spool"
_KEY_FILE = "handle.key"
#: What the store creates in its directory (removed on close).
_CONTENTS = ("data", _KEY_FILE)


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


#: ``resolver(payload) -> BlobSource``; raises BlobUnavailableError to refuse.
BlobResolver = Callable[[bytes], BlobSource]


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
        self._spool = Spool(self.directory / "data", self.settings)
        self._codec: HandleCodec | None = None
        self._resolvers: dict[str, BlobResolver] = {_SPOOL_KIND: self._resolve_spool}

    # -- lifecycle -------------------------------------------------------------

    def open(self) -> None:
        """Create the private directory and the handle key; remove stale and expired files."""
        if self._codec is not None:
            return
        if self.settings.spool_dir is None:
            private_dir(self.directory.parent.parent)
        private_dir(self.directory)
        self._owned = OwnedDir.claim(
            self.directory, _CONTENTS, what="blob spool",
            hint="give each Computer its own --blob-spool-dir (or leave it unset)",
        )  # fmt: skip
        try:
            if self.settings.spool_dir is None:
                stale = sweep_stale(self.directory.parent, _CONTENTS, keep=self.directory)
                if stale:
                    logger.info("blob spool: removed %d left by Computers that died", stale)
            private_dir(self._spool.directory)
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
        return self._info(*self._spool.put_bytes(data), mime_type)

    def put_file(self, path: str | os.PathLike[str], mime_type: str) -> BlobInfo:
        """Spool a copy of the file at ``path`` (streamed, hashed while copying)."""
        return self._info(*self._spool.put_file(path), mime_type)

    def _info(self, digest: bytes, size: int, mime_type: str) -> BlobInfo:
        payload = digest + struct.pack(">Q", size) + mime_type.encode("utf-8")
        handle = self._codec_or_fail().mint(_SPOOL_KIND, payload)
        return BlobInfo(handle=handle, size=size, sha256=digest.hex(), mime_type=mime_type)

    # -- maintenance -----------------------------------------------------------

    def sweep(self, now: float | None = None, *, stale_tmp_age: float | None = None) -> int:
        """Remove expired items and stale temporary files; returns the items removed."""
        return self._spool.sweep(now, stale_tmp_age=stale_tmp_age)

    def usage(self) -> SpoolUsage:
        """Items and bytes currently spooled."""
        return self._spool.usage()

    def clear(self) -> None:
        """Remove every spooled item (the key stays, so live handles become ``gone``)."""
        self._spool.clear()

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
        read = self._spool.reader(digest.hex(), size)
        return BlobSource(
            size=size, sha256=digest.hex(), mime_type=mime.decode("utf-8", "replace"), read=read
        )
