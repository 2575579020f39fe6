"""Putting skill packages on disk: the user folder as it is, MCP skills staged privately.

Rules (spec delta §4.4, §4.5, §4.8):

- User folder: each direct subdirectory holding a ``SKILL.md`` is a package; its
  directory name must equal its frontmatter ``name``. Packages are used in place.
- MCP server: a ``skill://`` resource whose ``_meta.source`` is ``mounted``, ``archive``
  or ``resources`` is a skill root; anything else is not a skill. Each root is staged into
  a fresh directory under the private install location, then swapped in atomically under
  ``mcp/<segment>/<frontmatter name>``, so a reader never sees half a package:
  ``mounted`` copies the local ``mount_dir`` (symlinks are skipped, never followed);
  ``archive`` downloads ``archive_uri`` with a size cap, checks ``archive_sha256`` when
  given and unpacks with :func:`unpack_archive`'s guards; ``resources`` reads every
  ``<root>/<rel path>`` sub-resource and writes it at its relative path.
- Any failure refuses that skill with a message for the log (never for the Agent).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import os
import shutil
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote

import attrs
import httpx2

from ._archive import ArchiveError, ArchiveLimits, safe_member_path, unpack_archive
from ._catalog import Skill
from ._frontmatter import SkillFrontmatter, parse_skill_md
from ._names import normalize_server_segment

__all__ = [
    "SKILL_MD",
    "SkillRoot",
    "StagingError",
    "scan_user_folder",
    "skill_roots",
    "stage_mcp_skill",
]

SKILL_MD: Final = "SKILL.md"
SCHEME: Final = "skill://"
MODES: Final = ("mounted", "archive", "resources")

#: ``resources/read`` for one URI → that result's ``contents`` list.
ReadResource = Callable[[str], Awaitable[Sequence[Mapping[str, Any]]]]


class StagingError(Exception):
    """A skill could not be staged; the message says why (for the Computer's log)."""


@attrs.frozen
class SkillRoot:
    """A ``skill://`` resource declaring one skill and how to stage it."""

    uri: str
    mode: str
    meta: Mapping[str, Any]

    @property
    def version(self) -> str | None:
        value = self.meta.get("version")
        return value if isinstance(value, str) else None

    @property
    def fingerprint(self) -> tuple[str, str, str | None, str | None]:
        """What decides whether a restage can be skipped (``version`` / ``etag``)."""
        etag = self.meta.get("etag")
        return (self.uri, self.mode, self.version, etag if isinstance(etag, str) else None)


def skill_roots(resources: Sequence[Mapping[str, Any]]) -> list[SkillRoot]:
    """The skill roots among an MCP server's resources, in listing order."""
    roots = []
    for resource in resources:
        uri, meta = resource.get("uri"), resource.get("_meta")
        if not isinstance(uri, str) or not uri.startswith(SCHEME) or not isinstance(meta, dict):
            continue
        mode = meta.get("source")
        if mode in MODES:
            roots.append(SkillRoot(uri=uri, mode=mode, meta=meta))
    return roots


def read_package(root: Path) -> Skill | str:
    """A user-folder package as a skill, or why it is refused."""
    skill_md = root / SKILL_MD
    if not skill_md.is_file():
        return f"{root}: no {SKILL_MD}"
    try:
        front, _ = parse_skill_md(skill_md.read_bytes())
    except (OSError, ValueError) as exc:
        return f"{skill_md}: {exc}"
    if front.name != root.name:
        return f"{root}: the directory name must equal the frontmatter name {front.name!r}"
    return Skill.from_user(root, front)


def scan_user_folder(folder: Path) -> tuple[list[Skill], list[str]]:
    """The user folder's packages (sorted by directory name) and the refusals."""
    if not folder.is_dir():
        return [], []
    skills: list[Skill] = []
    refusals: list[str] = []
    for entry in sorted(folder.iterdir()):
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        outcome = read_package(entry)
        if isinstance(outcome, str):
            refusals.append(outcome)
        else:
            skills.append(outcome)
    return skills, refusals


# ------------------------------------------------------------------ staging


def _copy_mounted(meta: Mapping[str, Any], dest: Path, limits: ArchiveLimits) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    mount = meta.get("mount_dir")
    if not isinstance(mount, str) or not os.path.isabs(mount):
        raise StagingError("mounted: _meta.mount_dir must be an absolute path")
    source = Path(mount)
    if not source.is_dir():
        raise StagingError(f"mounted: {mount} is not a directory")
    members = written = 0
    dest.mkdir(parents=True)
    for current, dirs, files in os.walk(source, followlinks=False):
        here = Path(current)
        target_dir = dest / here.relative_to(source)
        for name in list(dirs):
            if (here / name).is_symlink():
                dirs.remove(name)  # never follow a link out of the package
            else:
                (target_dir / name).mkdir(exist_ok=True)
        for name in files:
            path = here / name
            if path.is_symlink() or not path.is_file():
                continue
            members += 1
            written += path.stat().st_size
            if members > limits.max_members or written > limits.max_bytes:
                raise StagingError(f"mounted: {mount} is larger than the staging limits")
            shutil.copyfile(path, target_dir / name)


async def _download(url: str, limit: int, timeout: float) -> bytes:
    if not url.startswith(("http://", "https://")):
        raise StagingError(f"archive: archive_uri must be an http(s) URL, got {url!r}")
    chunks: list[bytes] = []
    size = 0
    try:
        async with (
            httpx2.AsyncClient(timeout=timeout, follow_redirects=True) as client,
            client.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                raise StagingError(f"archive: GET answered HTTP {response.status_code}")
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise StagingError(f"archive: larger than the {limit}-byte download limit")
                chunks.append(chunk)
    except httpx2.HTTPError as exc:
        raise StagingError(f"archive: download failed: {type(exc).__name__}") from None
    return b"".join(chunks)


def _unpack_checked(
    meta: Mapping[str, Any], data: bytes, fmt: str, dest: Path, limits: ArchiveLimits
) -> None:
    expected = meta.get("archive_sha256")
    if isinstance(expected, str) and hashlib.sha256(data).hexdigest() != expected.lower():
        raise StagingError("archive: the download does not match archive_sha256")
    try:
        unpack_archive(data, fmt, dest, limits)
    except ArchiveError as exc:
        raise StagingError(f"archive refused: {exc}") from None
    # A package may sit at the top of the archive or inside one top-level directory.
    if not (dest / SKILL_MD).is_file():
        entries = list(dest.iterdir())
        if len(entries) == 1 and entries[0].is_dir() and (entries[0] / SKILL_MD).is_file():
            inner = entries[0]
            for item in list(inner.iterdir()):
                item.rename(dest / item.name)
            inner.rmdir()


async def _fetch_archive(
    meta: Mapping[str, Any], dest: Path, limits: ArchiveLimits, timeout: float
) -> None:
    url, fmt = meta.get("archive_uri"), meta.get("archive_format")
    if not isinstance(url, str) or not isinstance(fmt, str):
        raise StagingError("archive: _meta.archive_uri and _meta.archive_format are required")
    data = await _download(url, limits.max_bytes, timeout)
    await asyncio.to_thread(_unpack_checked, meta, data, fmt, dest, limits)


def _content_bytes(contents: Sequence[Mapping[str, Any]], uri: str) -> bytes:
    if not contents:
        raise StagingError(f"resources: {uri} has no contents")
    first = contents[0]
    if isinstance(first.get("text"), str):
        return str(first["text"]).encode("utf-8")
    if isinstance(first.get("blob"), str):
        try:
            return base64.b64decode(first["blob"], validate=True)
        except (binascii.Error, ValueError):
            raise StagingError(f"resources: {uri} has an invalid base64 blob") from None
    raise StagingError(f"resources: {uri} has neither text nor blob")


async def _read_resources(
    root: SkillRoot,
    resources: Sequence[Mapping[str, Any]],
    read: ReadResource,
    dest: Path,
    limits: ArchiveLimits,
) -> None:
    prefix = root.uri.rstrip("/") + "/"
    subs = [r["uri"] for r in resources if isinstance(r.get("uri"), str)]
    subs = [uri for uri in subs if uri.startswith(prefix) and uri != prefix]
    if len(subs) > limits.max_members:
        raise StagingError(f"resources: more than {limits.max_members} files")
    files: list[tuple[str, bytes]] = []
    written = 0
    for uri in subs:
        data = _content_bytes(await read(uri), uri)
        written += len(data)
        if written > limits.max_bytes:
            raise StagingError(f"resources: more than {limits.max_bytes} bytes")
        files.append((unquote(uri[len(prefix) :]), data))
    await asyncio.to_thread(_write_files, dest, files)


def _write_files(dest: Path, files: Sequence[tuple[str, bytes]]) -> None:
    dest.mkdir(parents=True)
    for rel_path, data in files:
        try:
            target = safe_member_path(dest, rel_path)
        except ArchiveError as exc:
            raise StagingError(f"resources: {exc}") from None
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


async def stage_mcp_skill(
    server: str,
    root: SkillRoot,
    resources: Sequence[Mapping[str, Any]],
    read: ReadResource,
    install: Path,
    *,
    limits: ArchiveLimits,
    download_timeout: float = 30.0,
    taken: set[str] | None = None,
) -> Skill:
    """Stage one skill of MCP server ``server`` under ``install``; :class:`StagingError`.

    ``taken`` holds the frontmatter names already staged in this pass over the server: a
    later package with one of them is refused *before* it is moved into place, so it can
    never overwrite the files of the skill that came first (the one that stays listed).
    """
    parent = install / "mcp" / normalize_server_segment(server)
    work = parent / f".staging-{uuid.uuid4().hex}"
    try:
        if root.mode == "mounted":
            await asyncio.to_thread(_copy_mounted, root.meta, work, limits)
        elif root.mode == "archive":
            await _fetch_archive(root.meta, work, limits, download_timeout)
        else:
            await _read_resources(root, resources, read, work, limits)
        final, front = await asyncio.to_thread(_finish, work, parent, taken)
    finally:
        await asyncio.to_thread(shutil.rmtree, work, ignore_errors=True)
    return Skill.from_mcp(server, final, front, root.uri, root.version)


def _finish(work: Path, parent: Path, taken: set[str] | None) -> tuple[Path, SkillFrontmatter]:
    skill_md = work / SKILL_MD
    if not skill_md.is_file():
        raise StagingError(f"the package has no {SKILL_MD}")
    try:
        front, _ = parse_skill_md(skill_md.read_bytes())
    except ValueError as exc:
        raise StagingError(str(exc)) from None
    if taken is not None:
        if front.name in taken:
            raise StagingError(f"a skill named {front.name!r} came first on this server")
        taken.add(front.name)
    final = parent / front.name
    _swap_in(work, final)
    return final, front


def _swap_in(work: Path, final: Path) -> None:
    """Replace ``final`` by ``work`` so that ``final`` is never half-written."""
    old = final.with_name(f".old-{uuid.uuid4().hex}")
    if final.exists():
        final.rename(old)
    try:
        work.rename(final)
    finally:
        shutil.rmtree(old, ignore_errors=True)
