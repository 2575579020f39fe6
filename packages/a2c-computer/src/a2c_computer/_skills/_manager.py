"""The Computer's skill manager: sources in, ``client:get_skills`` / ``client:get_skill`` out.

It keeps the :class:`SkillCatalog` current from two sources — the user folder (polled)
and the MCP servers (staged when a server becomes ready, restaged when its ``skill://``
resources change, orphaned while it is down) — and answers the two requests. Every change
to what would be listed is reported once, after a short debounce, through ``on_change``
(the Computer sends ``server:update_skills`` from there, only while in an office).

Serving a file (spec delta §4.8, §4.9): the 4016 lexer first, then an exact registry
lookup (4014 with ``details.name``), then the sandbox (4017). ``SKILL.md`` is served
without its frontmatter. Text within the inline budget goes in ``body``; anything else is
minted a blob handle whose every pull re-runs the lookup and the sandbox, so a skill or
file that vanished since is ``gone`` rather than served stale. Above the cap: 4017
``too_large``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs

from a2c_computer._blobs import BlobSource
from a2c_computer._exceptions import BlobUnavailableError
from a2c_computer._workdirs import OwnedDir, per_process_name, sweep_stale
from a2c_protocol import (
    DEFAULT_SKILL_REL_PATH,
    A2CSkillRef,
    GetSkillRet,
    InvalidSkillNameError,
    SkillNotFoundError,
    SkillResourceError,
    SkillResourceReason,
    is_text_mime,
    mime_type_for,
)

from ._archive import ArchiveLimits
from ._catalog import USER_ORIGIN, Skill, SkillCatalog
from ._frontmatter import split_frontmatter
from ._names import lex_skill_name
from ._sandbox import SkillFileProblem, resolve_skill_file
from ._stage import (
    SKILL_MD,
    SkillRoot,
    StagingError,
    scan_user_folder,
    skill_roots,
    stage_mcp_skill,
)

__all__ = ["SkillManager", "SkillSettings", "SkillSource", "default_skill_settings"]

logger = logging.getLogger("a2c_computer.skills")

BLOB_KIND = "skill"
#: What staging creates in the install directory (removed on stop).
_STAGED = ("mcp",)


@attrs.frozen(kw_only=True)
class SkillSettings:
    """Where skills live and how big they may be."""

    #: Private directory MCP skills are staged into (created 0700).
    install_dir: Path
    #: The user's own skill packages (each a directory with a SKILL.md); None: no folder.
    user_dir: Path | None = None
    #: How often the user folder is re-scanned, in seconds.
    poll_interval: float = 2.0
    #: Text files up to this many bytes are answered inline.
    inline_budget: int = 32 * 1024
    #: Files above this many bytes are refused (4017 too_large).
    max_file_bytes: int = 100 * 1024 * 1024
    #: Bounds for one staged package (archive members / bytes, download size).
    limits: ArchiveLimits = ArchiveLimits()
    #: Changes within this window are announced once.
    debounce: float = 0.3
    #: ``install_dir`` is this process's own (``<name>-<pid>-<random>``): directories that
    #: dead Computers left next to it are removed at start.
    per_process: bool = False


def default_data_root() -> Path:
    """The user's data directory (XDG on Linux, Application Support on macOS, APPDATA)."""
    if sys.platform == "win32":
        base = os.environ.get("APPDATA")
        return Path(base) if base else Path.home() / "AppData" / "Roaming"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    base = os.environ.get("XDG_DATA_HOME")
    return Path(base) if base else Path.home() / ".local" / "share"


def default_skill_settings(computer_name: str) -> SkillSettings:
    """Skills under the user's data directory: ``a2c-computer/skills/user`` is the user
    folder (shared by the user's Computers), ``a2c-computer/skills/staged/<name>-<pid>-<random>``
    holds what this Computer process staged from its MCP servers (removed when it stops)."""
    base = default_data_root() / "a2c-computer" / "skills"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in computer_name) or "_"
    return SkillSettings(
        install_dir=base / "staged" / per_process_name(safe),
        user_dir=base / "user",
        per_process=True,
    )


class SkillSource(Protocol):
    """What the manager needs of an MCP server (the Computer's ``McpServer``)."""

    @property
    def name(self) -> str: ...

    @property
    def has_resources(self) -> bool: ...

    async def list_all(self, method: str, key: str) -> list[dict[str, Any]]: ...

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = ...
    ) -> dict[str, Any]: ...


class BlobMinter(Protocol):
    """The part of the Computer's blob store skills use."""

    def register_kind(self, kind: str, resolver: Callable[[bytes], BlobSource]) -> None: ...

    def mint(self, kind: str, payload: bytes) -> str: ...


@attrs.frozen
class _Served:
    data: bytes
    mime_type: str


class SkillManager:
    """Skills from the user folder and the MCP servers, served to Agents."""

    def __init__(
        self,
        settings: SkillSettings,
        *,
        on_change: Callable[[], Awaitable[None]] | None = None,
        blobs: BlobMinter | None = None,
    ) -> None:
        self.settings = settings
        self.catalog = SkillCatalog()
        self._on_change = on_change
        self._blobs = blobs
        self._fingerprints: dict[str, tuple[Any, ...]] = {}
        self._user_signature: tuple[Any, ...] | None = None
        self._listed: list[A2CSkillRef] = []
        self._pending: asyncio.Task[None] | None = None
        self._poller: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._digests: dict[tuple[str, int, int], str] = {}
        self._dirty = False
        self._started = False
        self._refusals: dict[str, tuple[str, ...]] = {}
        self._owned: OwnedDir | None = None
        if blobs is not None:
            blobs.register_kind(BLOB_KIND, self._resolve_blob)

    # ------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Create the install location, read the user folder, start watching it."""
        await asyncio.to_thread(self._claim_install_dir)
        await self.scan_user_folder()
        self._started = True  # what exists at start is not a change to announce
        if self.settings.user_dir is not None:
            self._poller = asyncio.create_task(self._poll_user_folder())

    async def stop(self) -> None:
        """Stop watching, drop a pending announcement, remove what was staged."""
        for task in (self._poller, self._pending):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._owned is not None:
            await asyncio.to_thread(self._owned.release)
            self._owned = None

    def _claim_install_dir(self) -> None:
        if self._owned is not None:
            return
        install = self.settings.install_dir
        install.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._owned = OwnedDir.claim(
            install, _STAGED, what="skill staging directory",
            hint="give each Computer its own --skills-install-dir (SkillSettings.install_dir)",
        )  # fmt: skip
        if self.settings.per_process:
            stale = sweep_stale(install.parent, _STAGED, keep=install)
            if stale:
                logger.info("skills: removed %d staging directories of dead Computers", stale)

    # ---------------------------------------------------------------- sources

    async def scan_user_folder(self) -> None:
        """Re-read the user folder (only when something in it changed)."""
        folder = self.settings.user_dir
        if folder is None:
            return
        signature = await asyncio.to_thread(_tree_signature, folder)
        if signature == self._user_signature:
            return
        self._user_signature = signature
        skills, refusals = await asyncio.to_thread(scan_user_folder, folder)
        async with self._lock:
            refusals += self.catalog.replace(USER_ORIGIN, skills)
        for refusal in refusals:
            logger.error("user skill refused: %s", refusal)
        self._refusals[USER_ORIGIN] = tuple(refusals)
        self._changed()

    async def _poll_user_folder(self) -> None:
        while True:
            await asyncio.sleep(self.settings.poll_interval)
            try:
                await self.scan_user_folder()
            except Exception as exc:  # a folder being edited must not stop the watch
                logger.warning("reading the user skill folder failed: %s", exc)

    async def server_ready(self, server: SkillSource) -> None:
        """Stage ``server``'s skills (it just connected or reconnected)."""
        await self._stage_server(server, force=False)

    async def server_down(self, server_name: str, *, stopped: bool = False) -> None:
        """Hide ``server_name``'s skills until it returns (``stopped``: on purpose)."""
        async with self._lock:
            changed = self.catalog.orphan(server_name)
        if changed:
            # A stop on purpose (the Computer stopping, a reload) is not news worth a line.
            logger.log(
                logging.DEBUG if stopped else logging.INFO,
                "MCP server %s is down: its skills are hidden until it returns",
                server_name,
            )
            self._changed()

    async def server_removed(self, server_name: str) -> None:
        """Forget ``server_name``'s skills (it left the configuration)."""
        async with self._lock:
            self.catalog.forget(server_name)
            self._fingerprints.pop(server_name, None)
            self._refusals.pop(server_name, None)
        self._changed()

    async def resources_changed(self, server: SkillSource) -> None:
        """``notifications/resources/list_changed``: restage if the skill set changed."""
        await self._stage_server(server, force=False)

    async def resource_updated(self, server: SkillSource, uri: str) -> None:
        """``notifications/resources/updated`` for a ``skill://`` URI: restage that server."""
        if uri.startswith("skill://"):
            await self._stage_server(server, force=True)

    async def _stage_server(self, server: SkillSource, *, force: bool) -> None:
        if not server.has_resources:
            return
        try:
            resources = await server.list_all("resources/list", "resources")
        except Exception as exc:
            logger.error("MCP server %s: listing skills failed: %s", server.name, exc)
            self._refusals[server.name] = (f"listing skills failed: {exc}",)
            return
        roots = skill_roots(resources)
        fingerprint = tuple(root.fingerprint for root in roots)
        if (
            not force
            and self.catalog.has(server.name)
            and self._fingerprints.get(server.name) == fingerprint
        ):
            async with self._lock:
                self.catalog.unorphan(server.name)
            logger.debug("MCP server %s: skill set unchanged", server.name)
            self._changed()
            return
        skills = []
        problems: list[str] = []
        taken: set[str] = set()
        for root in roots:
            try:
                skills.append(await self._stage_one(server, root, resources, taken))
            except StagingError as exc:
                logger.error("MCP server %s: skill %s refused: %s", server.name, root.uri, exc)
                problems.append(f"{root.uri}: {exc}")
        async with self._lock:
            refusals = self.catalog.replace(server.name, skills)
            self._fingerprints[server.name] = fingerprint
        for refusal in refusals:
            logger.error("skill refused: %s", refusal)
        self._refusals[server.name] = tuple(problems + refusals)
        self._changed()

    async def _stage_one(
        self,
        server: SkillSource,
        root: SkillRoot,
        resources: Sequence[Mapping[str, Any]],
        taken: set[str],
    ) -> Skill:
        async def read(uri: str) -> Sequence[Mapping[str, Any]]:
            result = await server.request("resources/read", {"uri": uri}, timeout=30)
            contents = result.get("contents")
            return contents if isinstance(contents, list) else []

        return await stage_mcp_skill(
            server.name,
            root,
            resources,
            read,
            self.settings.install_dir,
            limits=self.settings.limits,
            taken=taken,
        )

    # ----------------------------------------------------------- announcing

    def _changed(self) -> None:
        listed = self.catalog.refs()
        if listed == self._listed:
            return
        self._listed = listed
        self._dirty = True
        if self._on_change is None or not self._started:
            return
        if self._pending is None or self._pending.done():
            self._pending = asyncio.create_task(self._announce())

    async def _announce(self) -> None:
        # Changes that arrive while waiting (or while announcing) are folded into one more
        # announcement, never lost.
        while self._dirty and self._on_change is not None:
            await asyncio.sleep(self.settings.debounce)
            self._dirty = False
            try:
                await self._on_change()
            except Exception as exc:
                logger.warning("announcing a skill change failed: %s", exc)

    def refusals(self) -> dict[str, tuple[str, ...]]:
        """Why packages were refused at the last staging of each source (the user folder
        under :data:`USER_ORIGIN`, MCP servers under their name); empty tuples omitted.

        The same messages are logged at ERROR; this keeps them for ``a2c-computer skills``
        and ``check``. They are never sent to an Agent.
        """
        return {origin: found for origin, found in self._refusals.items() if found}

    # ------------------------------------------------------------- serving

    def skills(self) -> list[A2CSkillRef]:
        """``GetSkillsRet.skills``: usable skills in discovery order."""
        return self.catalog.refs()

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


def _tree_signature(folder: Path) -> tuple[Any, ...]:
    """Names, sizes and mtimes of everything under ``folder`` (cheap change detection)."""
    if not folder.is_dir():
        return ()
    entries = []
    for path in sorted(folder.rglob("*")):
        with contextlib.suppress(OSError):
            info = path.stat()
            entries.append((str(path), info.st_size, info.st_mtime_ns))
    return tuple(entries)
