"""Unpacking a skill archive (``tar.gz`` or ``zip``) that an MCP server points to, safely.

An archive comes from a server the Computer only trusts as far as its tools, so it is
treated as hostile input. The whole archive is refused (nothing is written outside a
fresh directory the caller owns) when any member:

- has an absolute name, a ``..`` segment, a backslash or a NUL;
- is a symlink, a hard link, a device or a FIFO (only files and directories unpack);
- would make the member count exceed ``max_members`` or the bytes written exceed
  ``max_bytes`` (counted while writing, so a header that lies about sizes — a "zip bomb" —
  is stopped at the limit, not trusted).
"""

from __future__ import annotations

import io
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Final

import attrs

__all__ = ["ArchiveError", "ArchiveLimits", "safe_member_path", "unpack_archive"]

_CHUNK: Final = 64 * 1024


class ArchiveError(ValueError):
    """The archive was refused; the message says which member and why."""


@attrs.frozen
class ArchiveLimits:
    """Bounds for one unpacked archive."""

    max_members: int = 1000
    max_bytes: int = 50 * 1024 * 1024


def safe_member_path(dest: Path, name: str) -> Path:
    """``dest / name`` for a plain relative POSIX ``name``; :class:`ArchiveError` otherwise."""
    if not name or "\x00" in name or "\\" in name:
        raise ArchiveError(f"member {name!r}: not a plain relative name")
    pure = PurePosixPath(name)
    if pure.is_absolute():
        raise ArchiveError(f"member {name!r}: absolute names are refused")
    if ".." in pure.parts:
        raise ArchiveError(f"member {name!r}: '..' is refused")
    parts = [p for p in pure.parts if p not in ("", ".")]
    if not parts:
        raise ArchiveError(f"member {name!r}: empty name")
    return dest.joinpath(*parts)


class _Budget:
    def __init__(self, limits: ArchiveLimits) -> None:
        self.limits = limits
        self.members = 0
        self.written = 0

    def member(self, name: str) -> None:
        self.members += 1
        if self.members > self.limits.max_members:
            raise ArchiveError(f"more than {self.limits.max_members} members (at {name!r})")

    def copy(self, source: IO[bytes], target: Path, name: str) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            while chunk := source.read(_CHUNK):
                self.written += len(chunk)
                if self.written > self.limits.max_bytes:
                    raise ArchiveError(
                        f"more than {self.limits.max_bytes} bytes once unpacked (at {name!r})"
                    )
                out.write(chunk)


def _tar_members(data: bytes) -> Iterator[tuple[tarfile.TarFile, tarfile.TarInfo]]:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive:
                yield archive, member
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveError(f"not a readable tar.gz archive: {exc}") from None


def _unpack_tar(data: bytes, dest: Path, budget: _Budget) -> None:
    for archive, member in _tar_members(data):
        budget.member(member.name)
        target = safe_member_path(dest, member.name)
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True)
        elif member.isfile():
            source = archive.extractfile(member)
            if source is None:
                raise ArchiveError(f"member {member.name!r}: unreadable")
            with source:
                budget.copy(source, target, member.name)
        else:
            kind = "link" if member.issym() or member.islnk() else "special file"
            raise ArchiveError(f"member {member.name!r}: a {kind}; only files and directories")


def _unpack_zip(data: bytes, dest: Path, budget: _Budget) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArchiveError(f"not a readable zip archive: {exc}") from None
    with archive:
        for info in archive.infolist():
            budget.member(info.filename)
            # Unix file type bits, when the producer set them (plain zips often do not).
            kind = stat.S_IFMT(info.external_attr >> 16)
            if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                raise ArchiveError(
                    f"member {info.filename!r}: a link or special file; only files and directories"
                )
            target = safe_member_path(dest, info.filename)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            try:
                with archive.open(info) as source:
                    budget.copy(source, target, info.filename)
            except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
                raise ArchiveError(f"member {info.filename!r}: unreadable ({exc})") from None


def unpack_archive(data: bytes, archive_format: str, dest: Path, limits: ArchiveLimits) -> None:
    """Unpack ``data`` into the new directory ``dest``; on refusal ``dest`` is removed.

    ``archive_format`` is ``"tar.gz"`` or ``"zip"``. Raises :class:`ArchiveError`.
    """
    unpackers = {"tar.gz": _unpack_tar, "zip": _unpack_zip}
    unpack = unpackers.get(archive_format)
    if unpack is None:
        raise ArchiveError(f"archive_format must be 'tar.gz' or 'zip', got {archive_format!r}")
    dest.mkdir(parents=True, exist_ok=False)
    try:
        unpack(data, dest, _Budget(limits))
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
