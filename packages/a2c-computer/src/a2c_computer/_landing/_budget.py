"""What the landing dir holds and may still take: a small state object, no I/O.

Rules:

* an entry costs the blocks it takes on disk (a 1-byte file: one block) and one file
  (an inode), whatever it is (file, directory, link); the partial dir itself is not counted;
* an upload in progress reserves, from its first chunk, its declared size rounded up to
  whole blocks, and one file; the reservation becomes the landed file's real cost when it
  lands and is released when it is dropped;
* a new upload is admitted only if, with its reservation, the totals stay within
  ``max_total_bytes`` and ``max_files`` and, when set, what its Agent landed plus reserved
  stays within ``agent_max_bytes`` and ``agent_max_files``; the first limit it would break
  is the refusal;
* the totals are kept as running sums (admitting is O(1)); a fresh scan of the directory
  (files deleted or added by others) is summed by :func:`tally` (off the event loop), which
  keeps who landed an entry the scan could not tell (no extended attributes) when it is
  still the same inode, and :meth:`Budget.adopt` takes it in O(uploads in progress).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import attrs

from ._settings import LandingSettings

__all__ = ["Budget", "Entry", "Refusal", "Tally", "tally"]


@attrs.frozen
class Entry:
    """One entry directly in the landing dir, as a scan saw it."""

    name: str
    ino: int
    regular: bool  # a regular file (what retention and ``landed clean`` may remove)
    size: int
    allocated: int  # bytes of the blocks it takes on disk
    mtime: float
    agent: str | None = None


@attrs.frozen
class Tally:
    """What a scan found, summed: entries (with who landed them), bytes on disk, per Agent."""

    entries: Mapping[str, Entry]
    bytes: int
    agent_bytes: Mapping[str, int]
    agent_files: Mapping[str, int]


def tally(entries: Mapping[str, Entry], known: Mapping[str, Entry]) -> Tally:
    """Sum a scan's ``entries``; an entry whose Agent the scan could not read (no extended
    attributes) keeps the one ``known`` for the same inode under that name."""
    merged: dict[str, Entry] = {}
    total = 0
    agent_bytes: Counter[str] = Counter()
    agent_files: Counter[str] = Counter()
    for name, entry in entries.items():
        if entry.agent is None:
            was = known.get(name)
            if was is not None and was.agent is not None and was.ino == entry.ino:
                entry = attrs.evolve(entry, agent=was.agent)
        merged[name] = entry
        total += entry.allocated
        if entry.agent is not None:
            agent_bytes[entry.agent] += entry.allocated
            agent_files[entry.agent] += 1
    return Tally(merged, total, agent_bytes, agent_files)


@attrs.frozen
class Refusal:
    """Why an upload does not fit: a message for the Agent (no local path) and details."""

    message: str
    details: dict[str, Any]


class Budget:
    """The landing dir's usage against the limits of ``settings``."""

    def __init__(self, settings: LandingSettings, block: int = 4096) -> None:
        self.settings = settings
        self.block = block
        self._entries: dict[str, Entry] = {}
        self._reserved: dict[str, tuple[str, int]] = {}  # upload id -> (agent, bytes)
        self._bytes = 0
        self._files = 0
        self._agent_bytes: Counter[str] = Counter()
        self._agent_files: Counter[str] = Counter()

    @property
    def entries(self) -> Mapping[str, Entry]:
        return self._entries

    def usage(self, agent: str | None = None) -> tuple[int, int]:
        """``(bytes on disk, files)`` in all, or of one Agent; reservations included."""
        if agent is None:
            return self._bytes, self._files
        return self._agent_bytes[agent], self._agent_files[agent]

    def charge(self, size: int) -> int:
        """The bytes ``size`` bytes take on disk: whole blocks, at least one."""
        return max(1, -(-size // self.block)) * self.block

    def refusal(self, agent: str, size: int) -> Refusal | None:
        """Why an upload of ``size`` bytes by ``agent`` does not fit now, or None."""
        cost = self.charge(size)
        s = self.settings
        checks = (
            ("total_bytes", self._bytes + cost, s.max_total_bytes, self._bytes,
             "the landing dir is full: {used} of {limit} bytes on disk in use, this upload "
             "needs {cost}"),
            ("files", self._files + 1, s.max_files, self._files,
             "the landing dir holds {used} files, its limit is {limit}"),
            ("agent_bytes", self._agent_bytes[agent] + cost, s.agent_max_bytes,
             self._agent_bytes[agent],
             "Agent {agent!r} has {used} of its {limit} bytes on disk in use, this upload "
             "needs {cost}"),
            ("agent_files", self._agent_files[agent] + 1, s.agent_max_files,
             self._agent_files[agent], "Agent {agent!r} has landed {used} files, its limit "
             "is {limit}"),
        )  # fmt: skip
        for limit_name, after, limit, used, text in checks:
            if limit is not None and after > limit:
                message = text.format(used=used, limit=limit, cost=cost, agent=agent)
                return Refusal(message + " (remove landed files to make room)",
                               {"limit": limit_name, "used": used, "max": limit,
                                "needed": cost if "bytes" in limit_name else 1})  # fmt: skip
        return None

    def reserve(self, upload_id: str, agent: str, size: int) -> None:
        cost = self.charge(size)
        self._reserved[upload_id] = (agent, cost)
        self._add(agent, cost, 1)

    def release(self, upload_id: str) -> None:
        reserved = self._reserved.pop(upload_id, None)
        if reserved is not None:
            self._add(reserved[0], -reserved[1], -1)

    def landed(self, upload_id: str, entry: Entry) -> None:
        """The upload landed as ``entry``: its reservation becomes the entry's real cost."""
        self.release(upload_id)
        self._put(entry)

    def forget(self, name: str) -> None:
        """``name`` was removed."""
        entry = self._entries.pop(name, None)
        if entry is not None:
            self._add(entry.agent, -entry.allocated, -1)

    def replace(self, entries: Mapping[str, Entry], block: int) -> None:
        """A fresh scan of the directory replaces what was known (reservations stay)."""
        self.adopt(tally(entries, self._entries), block)

    def adopt(self, counted: Tally, block: int) -> None:
        """Take a :func:`tally` made from a fresh scan (O(uploads in progress): the tally
        itself is made off the event loop)."""
        self.block = block
        self._entries = dict(counted.entries)
        self._bytes, self._files = counted.bytes, len(counted.entries)
        self._agent_bytes, self._agent_files = (
            Counter(counted.agent_bytes),
            Counter(counted.agent_files),
        )
        for agent, cost in self._reserved.values():
            self._add(agent, cost, 1)

    def _put(self, entry: Entry) -> None:
        self.forget(entry.name)
        self._entries[entry.name] = entry
        self._add(entry.agent, entry.allocated, 1)

    def _add(self, agent: str | None, nbytes: int, files: int) -> None:
        self._bytes += nbytes
        self._files += files
        if agent is not None:
            self._agent_bytes[agent] += nbytes
            self._agent_files[agent] += files
            if not self._agent_files[agent]:
                del self._agent_bytes[agent], self._agent_files[agent]
