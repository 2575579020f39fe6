"""Directories opened once and worked in by name, never through a link someone put there.

Rules:

* the landing dir itself is the operator's path and is followed like any path given on the
  command line; everything *inside* it is reached relative to its open descriptor
  (``dir_fd``), so no later lookup walks the path again and a directory swapped for a link
  between two steps is never entered;
* a subdirectory (``.a2c-partial``) is opened with ``O_NOFOLLOW | O_DIRECTORY``: a link, a
  file or a directory owned by another user there is :class:`UnsafeEntryError`, never
  followed; ours is kept at mode 0700;
* entries are removed with ``unlinkat`` (a link is removed itself, its target never
  touched), stat-ed without following, and linked without following.

Where the OS has no ``dir_fd`` (Windows) the same calls go by path after an ``lstat``
check: links are still refused, but a swap between the check and the use is not excluded.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["AT_SUPPORTED", "Dir", "UnsafeEntryError"]

_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: Whether entries are reached by descriptor (POSIX) or by path (Windows).
AT_SUPPORTED = bool(_DIRECTORY) and os.open in os.supports_dir_fd and os.scandir in os.supports_fd


class UnsafeEntryError(OSError):
    """An entry that must not be used: a link, not a directory, or not ours."""


class Dir:
    """An open directory; every name given to its methods is one entry inside it."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    def open(cls, path: Path) -> Dir:
        """The operator's directory (followed if it is a link: the operator chose it)."""
        if not AT_SUPPORTED:  # pragma: no cover - Windows
            if not path.is_dir():
                raise NotADirectoryError(f"{path} is not a directory")
            return cls(path, None)
        return cls(path, os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> Dir:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _at(self, name: str) -> tuple[str, dict[str, Any]]:
        """The arguments naming ``name``: relative to the descriptor, else a joined path."""
        if self.fd is None:  # pragma: no cover - Windows
            return str(self.path / name), {}
        return name, {"dir_fd": self.fd}

    def subdir(self, name: str, *, create: bool) -> Dir:
        """Our private subdirectory ``name`` (made 0700 when ``create``), never a link."""
        where, at = self._at(name)
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(where, 0o700, **at)
        if self.fd is None:  # pragma: no cover - Windows
            st = os.lstat(where)
            if not stat.S_ISDIR(st.st_mode):
                raise UnsafeEntryError(f"{where} is a link or not a directory: not followed")
            return Dir(Path(where), None)
        try:
            fd = os.open(where, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, **at)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            raise UnsafeEntryError(
                f"{self.path / name} is a link or not a directory: not followed"
            ) from exc
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            os.close(fd)
            raise UnsafeEntryError(f"{self.path / name} belongs to another user: not used")
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, 0o700)
        return Dir(self.path / name, fd)

    def create(self, name: str, mode: int = 0o600) -> int:
        """A new file ``name`` open for writing (never an existing one, never through a link)."""
        where, at = self._at(name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        return os.open(where, flags | getattr(os, "O_BINARY", 0), mode, **at)

    def lstat(self, name: str) -> os.stat_result:
        where, at = self._at(name)
        return os.stat(where, follow_symlinks=False, **at)

    def unlink(self, name: str) -> None:
        """Remove the entry ``name`` itself (a link's target is never touched)."""
        where, at = self._at(name)
        os.unlink(where, **at)

    def rmdir(self, name: str) -> None:
        where, at = self._at(name)
        os.rmdir(where, **at)

    def link_from(self, source: Dir, source_name: str, name: str) -> None:
        """Hard-link ``source/source_name`` as ``name`` here; EEXIST instead of replacing."""
        if self.fd is None or source.fd is None:  # pragma: no cover - Windows
            os.link(source.path / source_name, self.path / name)
            return
        os.link(source_name, name, src_dir_fd=source.fd, dst_dir_fd=self.fd,
                follow_symlinks=False)  # fmt: skip

    def entries(self) -> Iterator[os.DirEntry[str]]:
        """The entries (``entry.stat(follow_symlinks=False)`` works on each)."""
        with os.scandir(self.fd if self.fd is not None else self.path) as found:
            yield from found
