"""Working directories a Computer process owns (blob spool, staged skills).

Rules:

* by default each Computer *process* gets its own directory, ``<name>-<pid>-<random>``
  under a shared container: two Computers with the same ``--name`` on one host (e.g. in two
  offices) never share a blob key, spooled files or staged skills;
* the owner holds an exclusive lock on ``<dir>/.lock`` while it runs; a directory given
  explicitly (``--blob-spool-dir``) that another live process holds is refused with a
  message naming that process, instead of being shared;
* on exit, also after a failed start, the owner removes what it created (the given
  ``contents``, the lock) and the directory itself when that leaves it empty, so nothing
  stays behind; a directory given explicitly is never removed with foreign files in it;
* a per-process directory left by a process that died without cleaning up (its lock is
  free again) is removed by the next Computer that starts under the same container;
* on platforms without ``fcntl`` (Windows) there is no lock: per-process naming still
  keeps processes apart.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from ._exceptions import ComputerError

if sys.platform != "win32":
    import fcntl

__all__ = ["LOCK_NAME", "OwnedDir", "per_process_name", "sweep_stale"]

LOCK_NAME = ".lock"


def per_process_name(segment: str) -> str:
    """``<segment>-<pid>-<random>``: a directory name no other process uses."""
    return f"{segment}-{os.getpid()}-{secrets.token_hex(3)}"


def _try_lock(path: Path) -> int | None:
    """An fd of the lock file, locked exclusively; None when another process holds it.

    A raw descriptor, not a file object: an owner that is never closed (a test, an embedding
    application) keeps its lock until exit without a ResourceWarning.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    if sys.platform == "win32":  # pragma: no cover - no flock there
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _holder(path: Path) -> str:
    with contextlib.suppress(OSError):
        pid = path.read_text(encoding="utf-8").strip()
        if pid:
            return f" (pid {pid})"
    return ""


def _remove(directory: Path, contents: Sequence[str]) -> None:
    for name in contents:
        target = directory / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
    with contextlib.suppress(FileNotFoundError):
        (directory / LOCK_NAME).unlink()
    with contextlib.suppress(OSError):
        directory.rmdir()  # only when nothing else is left in it


class OwnedDir:
    """A directory this process holds the lock of; :meth:`release` cleans it up."""

    def __init__(self, directory: Path, contents: Sequence[str], lock: int) -> None:
        self.directory = directory
        self._contents = tuple(contents)
        self._lock: int | None = lock

    @classmethod
    def claim(cls, directory: Path, contents: Sequence[str], *, what: str, hint: str) -> OwnedDir:
        """Lock ``directory`` (created by the caller) or raise ComputerError saying who has it.

        ``contents`` are the names in it this owner creates (removed by :meth:`release`).
        """
        lock_path = directory / LOCK_NAME
        lock = _try_lock(lock_path)
        if lock is None:
            raise ComputerError(
                f"{what} {directory} is in use by another Computer{_holder(lock_path)}; "
                f"two Computers must not share it: {hint}"
            )
        os.ftruncate(lock, 0)
        os.write(lock, str(os.getpid()).encode("ascii"))
        return cls(directory, contents, lock)

    def release(self) -> None:
        """Remove what this owner created and drop the lock (idempotent)."""
        if self._lock is None:
            return
        try:
            _remove(self.directory, self._contents)
        finally:
            os.close(self._lock)
            self._lock = None


def sweep_stale(container: Path, contents: Sequence[str], *, keep: Path) -> int:
    """Remove per-process directories under ``container`` whose owner died; returns how many.

    Only directories holding a lock file nobody holds are touched (never ``keep``).
    """
    removed = 0
    try:
        entries = list(container.iterdir())
    except OSError:
        return 0
    for entry in entries:
        if entry == keep or entry.is_symlink() or not entry.is_dir():
            continue
        lock_path = entry / LOCK_NAME
        if not lock_path.is_file():
            continue
        lock = _try_lock(lock_path)
        if lock is None:
            continue
        try:
            _remove(entry, contents)
            removed += 1
        finally:
            os.close(lock)
    return removed
