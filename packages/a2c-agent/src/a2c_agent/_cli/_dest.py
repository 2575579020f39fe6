"""Where ``a2c-agent`` writes files: one rule for ``call --save-dir``, ``blob -o`` and
``skill -o``, checked before any work starts, and writes that never clobber.

Rules:

* a directory to save into (``--save-dir``) must already exist and be a writable
  directory; a missing one is refused with a hint to create it (parents are never created);
* a file to write (``-o FILE``) must not be a directory, and the directory it goes in must
  already exist and be writable; an existing file (or symlink) is refused unless
  ``--overwrite`` is given;
* the write itself is exclusive (``O_EXCL``): a file that appeared between the check and
  the write is left alone, not overwritten;
* a binary item of a tool result goes to ``<tool>-<n><ext>``, or the first free
  ``<tool>-<n>-<k><ext>`` (k = 1, 2, ...) when that name is taken: two runs can never
  pick the same file.
"""

from __future__ import annotations

import os
from pathlib import Path

from a2c_agent._exceptions import AgentError

__all__ = ["OutputFileError", "dir_problem", "file_problem", "write_file", "write_free"]

#: How many ``-<k>`` suffixes are tried before giving up on a free name.
MAX_SUFFIX = 10_000

#: Exclusive creation (``O_CREAT | O_EXCL``), and plain replacement.
_NEW = "xb"
_REPLACE = "wb"


class OutputFileError(AgentError):
    """A file could not be written where the command line said (after the checks)."""


def _dir_state(directory: Path) -> str | None:
    if not directory.exists():
        return (
            f"directory {str(directory)!r} does not exist (parents are never created: "
            f"create it first, e.g. mkdir -p {directory})"
        )
    if not directory.is_dir():
        return f"{str(directory)!r} is not a directory"
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"directory {str(directory)!r} is not writable"
    return None


def dir_problem(directory: str) -> str | None:
    """Why binary items cannot be saved into ``directory``, or None when they can."""
    return _dir_state(Path(directory))


def file_problem(path: str, *, overwrite: bool) -> str | None:
    """Why ``path`` cannot be written as a new file (or replaced, with ``overwrite``)."""
    target = Path(path)
    if target.is_dir():
        return f"{path!r} is a directory: give a file name, e.g. {target / 'NAME'}"
    if path.endswith(os.sep):
        return f"{path!r} ends with {os.sep!r}: give a file name"
    problem = _dir_state(target.parent)
    if problem is not None:
        return problem
    if os.path.lexists(target) and not overwrite:
        return f"{path!r} exists: not overwriting it (pass --overwrite to replace it)"
    return None


def _write(path: Path, data: bytes, mode: str) -> None:
    with path.open(mode) as handle:
        handle.write(data)


def write_file(path: str, data: bytes, *, overwrite: bool) -> None:
    """Write ``data`` to ``path``; never replaces a file unless ``overwrite``.

    Raises :class:`OutputFileError` with the reason when the file cannot be written.
    """
    try:
        _write(Path(path), data, _REPLACE if overwrite else _NEW)
    except FileExistsError:
        raise OutputFileError(
            f"{path!r} appeared while downloading: not overwriting it (pass --overwrite)"
        ) from None
    except OSError as exc:
        raise OutputFileError(f"cannot write {path!r}: {exc.strerror or exc}") from None


def write_free(directory: Path, stem: str, extension: str, data: bytes) -> Path:
    """Write ``data`` to ``directory/stem<extension>`` or the first free ``stem-<k>`` name."""
    for k in range(MAX_SUFFIX):
        path = directory / (f"{stem}{extension}" if k == 0 else f"{stem}-{k}{extension}")
        try:
            _write(path, data, _NEW)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free name for {stem}{extension} in {directory}")
