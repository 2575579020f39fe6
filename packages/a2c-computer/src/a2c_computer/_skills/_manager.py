"""The Computer's skill manager: sources in, ``client:get_skills`` / ``client:get_skill`` out.

It keeps the :class:`SkillCatalog` current from two sources — the user folder (polled)
and the MCP servers (staged when a server becomes ready, restaged when its ``skill://``
resources change, orphaned while it is down) — and answers the two requests, reading
files through :class:`~a2c_computer._skills._files.SkillFiles`. Every change to what would
be listed is reported once, after a short debounce, through ``on_change`` (the Computer
sends ``server:update_skills`` from there, only while in an office).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from a2c_computer._workdirs import OwnedDir, sweep_stale
from a2c_protocol import A2CSkillRef, GetSkillRet

from ._catalog import USER_ORIGIN, Skill, SkillCatalog
from ._files import BlobMinter, SkillFiles
from ._settings import SkillSettings
from ._stage import (
    SkillRoot,
    StagingError,
    scan_user_folder,
    skill_roots,
    stage_mcp_skill,
)

__all__ = ["SkillManager", "SkillSource"]

logger = logging.getLogger("a2c_computer.skills")

#: What staging creates in the install directory (removed on stop).
_STAGED = ("mcp",)


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
        self._fingerprints: dict[str, tuple[Any, ...]] = {}
        self._user_signature: tuple[Any, ...] | None = None
        self._listed: list[A2CSkillRef] = []
        self._pending: asyncio.Task[None] | None = None
        self._poller: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._dirty = False
        self._started = False
        self._refusals: dict[str, tuple[str, ...]] = {}
        self._owned: OwnedDir | None = None
        self._files = SkillFiles(settings, self.catalog, blobs)

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
        return await self._files.read(name, rel_path, req_id)


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
