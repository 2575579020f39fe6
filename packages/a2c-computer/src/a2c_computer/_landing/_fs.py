"""The landing dir on disk: scan it, write partial files, land them, clean up.

Every method blocks: the store runs them in its one worker thread, never on the event
loop, and ``a2c-computer landed`` calls them directly. Every entry is reached through
:class:`~._dirs.Dir` (by descriptor, never through a link inside the landing dir).

Who landed a file is kept with the file, in the extended attribute ``user.a2c.agent``
(where the file system has them; elsewhere the running Computer remembers it for the files
it landed itself, and earlier ones count for nobody).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from ._budget import Entry
from ._dirs import Dir, UnsafeEntryError
from ._names import PARTIAL_DIR

__all__ = ["ATTR_AGENT", "LandingDir", "Scan", "write_all"]

logger = logging.getLogger("a2c_computer.landing")

#: The extended attribute naming the Agent that landed a file.
ATTR_AGENT = "user.a2c.agent"
_MAX_NAME_TRIES = 64
_DEFAULT_BLOCK = 4096


@attrs.frozen
class Scan:
    """The landing dir's entries (not the partial dir) and its file system's block size."""

    entries: dict[str, Entry]
    block: int


class LandingDir:
    """The landing dir ``root`` (an absolute path the operator chose)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def problem(self) -> str | None:
        """Why nothing can land in ``root`` (names the path: for the operator only), or None."""
        if not self.root.exists():
            return f"landing dir {self.root} does not exist (create it, or fix --landing-dir)"
        if not self.root.is_dir():
            return f"landing dir {self.root} is not a directory"
        if not os.access(self.root, os.W_OK | os.X_OK):
            return f"landing dir {self.root} is not writable by this user"
        return None

    # ------------------------------------------------------------------ reading

    def scan(self, known: Mapping[str, Entry] | None = None) -> Scan:
        """Every entry but the partial dir; who landed each (``known`` spares re-reading
        the attribute of an entry seen before, same inode and time)."""
        known = known or {}
        entries: dict[str, Entry] = {}
        with Dir.open(self.root) as top:
            block = _block_size(top)
            for found in list(top.entries()):
                if found.name == PARTIAL_DIR:
                    continue
                try:
                    st = found.stat(follow_symlinks=False)
                except OSError:  # gone since it was listed
                    continue
                entry = _entry(found.name, st, block)
                seen = known.get(found.name)
                if seen is not None and (seen.ino, seen.mtime) == (entry.ino, entry.mtime):
                    agent = seen.agent
                else:
                    agent = self._agent_of(found.name) if entry.regular else None
                entries[found.name] = attrs.evolve(entry, agent=agent)
        return Scan(entries, block)

    def _agent_of(self, name: str) -> str | None:
        if not hasattr(os, "getxattr"):  # pragma: no cover - macOS, Windows
            return None
        try:
            raw = os.getxattr(self.root / name, ATTR_AGENT, follow_symlinks=False)
        except OSError:
            return None
        return raw.decode("utf-8", "replace") or None

    # ------------------------------------------------------------------ one upload

    def start_part(self, part_name: str, agent: str) -> int:
        """A new partial file in our private partial dir, open for writing, marked with
        the Agent; raises OSError (:class:`UnsafeEntryError` for a planted link)."""
        with Dir.open(self.root) as top, top.subdir(PARTIAL_DIR, create=True) as partial:
            fd = partial.create(part_name)
        if hasattr(os, "setxattr"):
            with contextlib.suppress(OSError):  # no user attributes on this file system
                os.setxattr(fd, ATTR_AGENT, agent.encode("utf-8"))
        return fd

    def land(self, fd: int, part_name: str, names: Iterable[str]) -> Entry:
        """Link the partial file (open as ``fd``) under the first free of ``names``.

        A name is never replaced (``link`` fails with EEXIST and the next one is tried).
        The landed entry must be the very file written through ``fd``: if the partial file
        was swapped (for a link or another file) before the link, the new name is removed
        again and :class:`UnsafeEntryError` raised.
        """
        mine = os.fstat(fd)
        with Dir.open(self.root) as top, top.subdir(PARTIAL_DIR, create=False) as partial:
            for tries, name in enumerate(names):
                if tries >= _MAX_NAME_TRIES:
                    break
                try:
                    top.link_from(partial, part_name, name)
                except FileExistsError:
                    continue
                st = top.lstat(name)
                if (st.st_dev, st.st_ino) != (mine.st_dev, mine.st_ino):
                    with contextlib.suppress(OSError):
                        top.unlink(name)
                    raise UnsafeEntryError(f"partial file {part_name} was replaced: not landed")
                return _entry(name, st, _block_size(top))
        raise FileExistsError(f"no free name after {_MAX_NAME_TRIES} tries")

    def drop_part(self, part_name: str, *, tidy: bool) -> None:
        """Remove a partial file (and the partial dir when ``tidy`` and it is empty)."""
        try:
            with Dir.open(self.root) as top:
                try:
                    with top.subdir(PARTIAL_DIR, create=False) as partial:
                        partial.unlink(part_name)
                except FileNotFoundError:
                    pass
                if tidy:
                    _tidy(top)
        except OSError as exc:
            logger.warning("cannot remove partial upload %s: %s", part_name, exc)

    # ------------------------------------------------------------------ housekeeping

    def sweep_orphans(self, cutoff: float, owned: set[str]) -> int:
        """Remove partial files modified before ``cutoff`` (epoch seconds) that no upload
        in progress owns; how many. A link named like the partial dir is removed (never
        followed); a partial dir that is not ours is left alone with a warning."""
        removed = 0
        with Dir.open(self.root) as top:
            try:
                st = top.lstat(PARTIAL_DIR)
            except FileNotFoundError:
                return 0
            if stat.S_ISLNK(st.st_mode):
                top.unlink(PARTIAL_DIR)
                logger.warning("removed %s: a link in place of the partial dir (not followed)",
                               self.root / PARTIAL_DIR)  # fmt: skip
                return 0
            try:
                partial = top.subdir(PARTIAL_DIR, create=False)
            except UnsafeEntryError as exc:
                logger.warning("partial uploads not swept: %s", exc)
                return 0
            with partial:
                for found in list(partial.entries()):
                    if found.name in owned:
                        continue
                    try:
                        st = found.stat(follow_symlinks=False)
                        if not stat.S_ISDIR(st.st_mode) and st.st_mtime < cutoff:
                            partial.unlink(found.name)
                            removed += 1
                    except OSError as exc:
                        logger.warning("cannot remove partial upload %s: %s", found.name, exc)
            if not owned:
                _tidy(top)
        return removed

    def remove(self, entry: Entry) -> bool:
        """Remove ``entry`` if it is still that regular file (same inode); whether it was."""
        with Dir.open(self.root) as top:
            try:
                st = top.lstat(entry.name)
                if not stat.S_ISREG(st.st_mode) or st.st_ino != entry.ino:
                    return False
                top.unlink(entry.name)
            except FileNotFoundError:
                return False
        return True


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (a short write goes on where it stopped)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _tidy(top: Dir) -> None:
    with contextlib.suppress(OSError):  # not empty, absent, or not a directory: leave it
        top.rmdir(PARTIAL_DIR)


def _block_size(top: Dir) -> int:
    if top.fd is None or not hasattr(os, "fstatvfs"):  # pragma: no cover - Windows
        return _DEFAULT_BLOCK
    info = os.fstatvfs(top.fd)
    return info.f_frsize or info.f_bsize or _DEFAULT_BLOCK


def _entry(name: str, st: os.stat_result, block: int) -> Entry:
    blocks = getattr(st, "st_blocks", None)
    allocated = blocks * 512 if blocks is not None else -(-st.st_size // block) * block
    return Entry(name=name, ino=st.st_ino, regular=stat.S_ISREG(st.st_mode), size=st.st_size,
                 allocated=allocated, mtime=st.st_mtime)  # fmt: skip
