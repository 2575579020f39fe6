"""Serving the files of listed skills: ``client:get_skill`` answers and skill blob pulls.

Separate from the manager, which keeps the catalog current from its sources: this module
only reads it. Rules (spec delta §4.8, §4.9): the 4016 lexer first, then an exact registry
lookup (4014 with ``details.name``), then the sandbox (4017). ``SKILL.md`` is served
without its frontmatter. Text within the inline budget goes in ``body``; anything else is
minted a blob handle whose every pull re-runs the lookup and the sandbox, so a skill or
file that vanished since is ``gone`` rather than served stale. Above the cap: 4017
``too_large``.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import attrs

from a2c_computer._blobs import BlobSource
from a2c_computer._exceptions import BlobUnavailableError
from a2c_protocol import (
    DEFAULT_SKILL_REL_PATH,
    GetSkillRet,
    InvalidSkillNameError,
    SkillNotFoundError,
    SkillResourceError,
    SkillResourceReason,
    is_text_mime,
    mime_type_for,
)

from ._catalog import SkillCatalog
from ._frontmatter import split_frontmatter
from ._names import lex_skill_name
from ._sandbox import SkillFileProblem, resolve_skill_file
from ._settings import SkillSettings
from ._stage import SKILL_MD

__all__ = ["BLOB_KIND", "BlobMinter", "SkillFiles"]

BLOB_KIND = "skill"


class BlobMinter(Protocol):
    """The part of the Computer's blob store skills use."""

    def register_kind(self, kind: str, resolver: Callable[[bytes], BlobSource]) -> None: ...

    def mint(self, kind: str, payload: bytes) -> str: ...


@attrs.frozen
class _Served:
    data: bytes
    mime_type: str


class SkillFiles:
    """One file of a listed skill, inline or by blob handle (and every pull of that handle)."""

    def __init__(
        self, settings: SkillSettings, catalog: SkillCatalog, blobs: BlobMinter | None
    ) -> None:
        self.settings = settings
        self.catalog = catalog
        self._blobs = blobs
        self._digests: dict[tuple[str, int, int], str] = {}
        if blobs is not None:
            blobs.register_kind(BLOB_KIND, self._resolve_blob)

    async def read(self, name: str, rel_path: str | None, req_id: str) -> GetSkillRet:
        """``client:get_skill``: one file, inline or by handle; raises the 4014/4016/4017 errors."""
        path = DEFAULT_SKILL_REL_PATH if rel_path is None else rel_path
        served = await asyncio.to_thread(self._load, name, path)
        size = len(served.data)
        digest = hashlib.sha256(served.data).hexdigest()
        ret = functools.partial(
            GetSkillRet,
            name=name,
            rel_path=path,
            mime_type=served.mime_type,
            total_size=size,
            sha256=digest,
            req_id=req_id,
        )
        if is_text_mime(served.mime_type) and size <= self.settings.inline_budget:
            try:
                return ret(body=served.data.decode("utf-8"))
            except UnicodeDecodeError:
                pass  # not valid UTF-8: it goes by handle, like binary
        if self._blobs is None:
            raise SkillResourceError(
                f"{path!r} is too large or binary and this Computer has no blob store",
                reason=SkillResourceReason.TOO_LARGE,
                rel_path=path,
                total_size=size,
            )
        payload = json.dumps([name, path], separators=(",", ":")).encode()
        return ret(blob_handle=self._blobs.mint(BLOB_KIND, payload))

    def _locate(self, name: str, rel_path: str) -> tuple[Path, bool]:
        """The file to serve and whether it is the package's SKILL.md (4016/4014/4017)."""
        problem = lex_skill_name(name)
        if problem is not None:
            raise InvalidSkillNameError(f"invalid skill name: {problem}", name=name)
        skill = self.catalog.get(name)
        if skill is None:
            raise SkillNotFoundError(f"no skill named {name!r} on this Computer", name=name)
        target = resolve_skill_file(skill.root, rel_path)
        if isinstance(target, SkillFileProblem):
            raise SkillResourceError(target.message, reason=target.reason, rel_path=rel_path)
        return target, target == skill.root.resolve() / SKILL_MD

    def _load(self, name: str, rel_path: str) -> _Served:
        target, is_skill_md = self._locate(name, rel_path)
        try:
            size = target.stat().st_size
            if size > self.settings.max_file_bytes:
                raise SkillResourceError(
                    f"{rel_path!r} is {size} bytes; this Computer serves at most "
                    f"{self.settings.max_file_bytes}",
                    reason=SkillResourceReason.TOO_LARGE,
                    rel_path=rel_path,
                    total_size=size,
                )
            data = target.read_bytes()
        except OSError:
            raise SkillResourceError(
                f"no file {rel_path!r} in this skill",
                reason=SkillResourceReason.NOT_FOUND,
                rel_path=rel_path,
            ) from None
        if is_skill_md:
            _, data = split_frontmatter(data)
        return _Served(data, mime_type_for(rel_path))

    def _resolve_blob(self, payload: bytes) -> BlobSource:
        # Every pull re-runs the lookup and the sandbox: a skill or file that went away
        # since the handle was minted is "gone", never served from a stale path; one the
        # sandbox now refuses (swapped for a symlink out of the package, say) "forbidden".
        try:
            name, rel_path = json.loads(payload)
            target, is_skill_md = self._locate(name, rel_path)
        except SkillResourceError as exc:
            refused = exc.reason in (SkillResourceReason.TRAVERSAL, SkillResourceReason.FORBIDDEN)
            raise BlobUnavailableError("forbidden" if refused else "gone") from None
        except (SkillNotFoundError, InvalidSkillNameError, ValueError):
            raise BlobUnavailableError("gone") from None
        if is_skill_md:
            served = self._load(name, rel_path)
            data = served.data
            digest = hashlib.sha256(data).hexdigest()
            return BlobSource(
                size=len(data),
                sha256=digest,
                mime_type=served.mime_type,
                read=lambda offset, length: data[offset : offset + length],
            )
        try:
            info = target.stat()
        except OSError:
            raise BlobUnavailableError("gone") from None
        key = (str(target), info.st_size, info.st_mtime_ns)
        digest = self._digests.get(key) or _file_sha256(target)
        self._digests = {key: digest}  # the last file only: pulls of one read repeat it

        def read(offset: int, length: int) -> bytes:
            try:
                with target.open("rb") as handle:
                    if os.fstat(handle.fileno()).st_mtime_ns != info.st_mtime_ns:
                        raise BlobUnavailableError("gone")
                    handle.seek(offset)
                    chunk = handle.read(length)
            except OSError:
                raise BlobUnavailableError("gone") from None
            if len(chunk) != length:
                raise BlobUnavailableError("gone")
            return chunk

        return BlobSource(
            size=info.st_size, sha256=digest, mime_type=mime_type_for(rel_path), read=read
        )


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1024 * 1024):
            digest.update(block)
    return digest.hexdigest()
