"""One upload's record and its file-system steps, run in the store's worker thread.

The store decides on the event loop and queues these steps on one thread, so they run in
the order they were asked for: a write never overtakes the start of its upload, a drop
never closes a file a write still uses. Only these steps touch an upload's descriptor and
hash; the loop reads ``dropped`` and ``accepted`` only.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

import attrs

from ._budget import Entry
from ._fs import LandingDir, write_all
from ._names import NUMBERED_TRIES, candidates, numbered

__all__ = ["Upload", "UploadWork"]

#: Names whose next number is remembered (the oldest is forgotten past this).
_REMEMBERED_NAMES = 4096


@attrs.define(eq=False)
class Upload:
    """An upload in progress."""

    upload_id: str
    agent: str
    total_size: int
    sha256: str
    name: str  # the sanitized name it asks to land under
    last_seen: float
    accepted: int = 0  # bytes accepted so far: the next chunk's offset
    dropped: bool = False  # set on the loop; its file steps are queued or done
    fd: int | None = None  # worker thread only
    hasher: Any = attrs.field(factory=hashlib.sha256)  # worker thread only

    @property
    def part_name(self) -> str:
        return f"{self.upload_id}.part"


class UploadWork:
    """The file-system steps of uploads in ``landing``; call them in one thread only."""

    def __init__(self, landing: LandingDir) -> None:
        self._dir = landing
        self._next: dict[str, int] = {}

    def start(self, upload: Upload) -> None:
        upload.fd = self._dir.start_part(upload.part_name, upload.agent)

    def write(self, upload: Upload, data: bytes) -> None:
        if upload.fd is None:  # dropped meanwhile: the loop sees ``dropped`` and says so
            return
        write_all(upload.fd, data)
        upload.hasher.update(data)

    def finish(self, upload: Upload, tidy: bool) -> tuple[Entry, str] | None:
        """Land a complete upload: ``(entry, sha256)``, or None when the digest is wrong."""
        fd, upload.fd = upload.fd, None
        if fd is None:
            raise FileNotFoundError(f"upload {upload.upload_id} was dropped")
        try:
            digest = upload.hasher.hexdigest()
            if digest != upload.sha256:
                return None
            first = self._next.get(upload.name, 2)
            entry = self._dir.land(fd, upload.part_name, candidates(upload.name, first))
            self._remember(upload.name, entry.name, first)
            return attrs.evolve(entry, agent=upload.agent), digest
        finally:
            os.close(fd)
            self._dir.drop_part(upload.part_name, tidy=tidy)

    def discard(self, upload: Upload, tidy: bool) -> None:
        fd, upload.fd = upload.fd, None
        if fd is not None:
            os.close(fd)
        self._dir.drop_part(upload.part_name, tidy=tidy)

    def expire(self, entries: Mapping[str, Entry], cutoff: float) -> list[str]:
        """Remove the regular files modified before ``cutoff`` (epoch seconds); their names."""
        return [
            name
            for name, entry in entries.items()
            if entry.regular and entry.mtime < cutoff and self._dir.remove(entry)
        ]

    def _remember(self, name: str, landed: str, first: int) -> None:
        """The number to try first next time ``name`` is asked for."""
        if landed == name:
            return
        following = first + NUMBERED_TRIES  # a random name: the numbers tried were taken
        for number in range(first, first + NUMBERED_TRIES):
            if numbered(name, str(number)) == landed:
                following = number + 1
                break
        self._next.pop(name, None)
        self._next[name] = following
        if len(self._next) > _REMEMBERED_NAMES:
            del self._next[next(iter(self._next))]
