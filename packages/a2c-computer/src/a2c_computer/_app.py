"""``Computer``: the core plus, when a Server URL is given, its Socket.IO link."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from a2c_protocol import CallToolResult, ComputerConfig, Event, JsonObject
from a2c_protocol._input import DEFAULT_MAX_REQUESTS_PER_CALL, DEFAULT_MAX_REQUESTS_PER_ROUND
from a2c_protocol._lines import Line

from ._asks._relay import DEFAULT_INPUT_TIMEOUT
from ._blobs import BlobSettings, BlobStore
from ._computer import ComputerCore, ConfirmCallback, ResultFinisher
from ._config import PromptFn
from ._exceptions import ComputerStateError
from ._landing import LandingSettings, LandingStore, run_reaper
from ._observe._metrics import ComputerMetrics
from ._server_link._agent_allowlist import AgentAllowList
from ._server_link._link import ComputerLink
from ._skills import SkillManager, SkillSettings, default_skill_settings
from ._toolcalls._extensions import CallExtras, InputAnswer

__all__ = ["Computer"]

_log = logging.getLogger("a2c_computer.link")


class Computer(ComputerCore):
    """An A2C Computer. Use it as an async context manager::

        async with Computer(load_config("computer.json"), name="box-1",
                            server_url="http://127.0.0.1:8000", office_id="office-1") as c:
            await c.serve_forever()

    Entering starts every enabled MCP server (each with its own lifecycle) and, when
    ``server_url`` is given, connects (polling first, ``a2c_version`` added automatically),
    joins ``office_id`` and serves the ``client:*`` events. While the MCP servers start, one
    connect (closed at once, no join) checks the Server, so a wrong URL or token fails
    before the slowest MCP server is up rather than after. A version refusal raises
    ``ProtocolVersionError`` after disconnecting; other connection failures raise
    ``LinkError`` (a Server that is not reachable yet is retried for ``wait_for_server``
    seconds). After a transient disconnect it reconnects with backoff and re-joins.

    Confirmation: a tool whose merged ToolMeta lacks ``auto_apply: true`` is confirmed with
    ``confirm`` (an async callback returning True to run it). Without a callback,
    ``confirm_policy="allow"`` (the default) runs it with a one-time WARN per tool, and
    ``"deny"`` answers 4005.

    ``metrics`` counts tool calls, notifications and desktops, and reads the MCP servers'
    states when scraped (serve it with ``a2c-computer run --metrics-port``).

    Large results: ``blobs`` (:class:`BlobSettings`) sets the inline budget, chunk size,
    absolute cap, spool directory, capacity and time-to-live of binary tool results that
    travel by handle, and the message limit no answer may exceed (it must match the
    Server's ``--max-message-bytes``). :attr:`blob_store` is the store; other producers
    register their own handle kinds on it.

    Skills: ``skills`` (:class:`SkillSettings`) says where the user's skill folder is and
    where skills of MCP servers are staged (default: under the user's data directory, see
    :func:`default_skill_settings`). :attr:`skills` is the skill manager; it answers
    ``client:get_skills`` / ``client:get_skill`` and announces ``server:update_skills``.

    Input requests: a tool's MCP server that asks the user or the model during a call is
    answered by the calling Agent when its call takes input (docs/compatibility.md); such a
    request waits ``input_timeout`` seconds at most for the answer, then the call is
    cancelled. Whatever the MCP server, one round carries at most
    ``max_input_requests_per_round`` requests and one call at most
    ``max_input_requests_per_call`` in all (past either, the requests are refused and the
    call ends with an error naming the bound), and a URL-mode request only a web link.

    Agents: ``allow_agents`` (names) limits who gets answers: ``client:*`` requests from any
    other Agent are refused with 403 and their cancels ignored, whatever the Server does.
    """

    def __init__(
        self,
        config: ComputerConfig | Mapping[str, Any] | str | Path,
        *,
        name: str,
        server_url: str | None = None,
        office_id: str | None = None,
        auth: Mapping[str, Any] | None = None,
        auth_hook: Callable[[], Awaitable[Mapping[str, Any]] | Mapping[str, Any]] | None = None,
        socketio_path: str = "socket.io",
        confirm: ConfirmCallback | None = None,
        confirm_policy: Literal["allow", "deny"] = "allow",
        env: Mapping[str, str] | None = None,
        prompt: PromptFn | None = None,
        interactive: bool | None = None,
        restart: bool = True,
        start_timeout: float = 30.0,
        connect_timeout: float = 30.0,
        reconnect: bool = True,
        wait_for_server: float = 0.0,
        history_size: int = 10,
        blobs: BlobSettings | None = None,
        skills: SkillSettings | None = None,
        allow_agents: Iterable[str] | None = None,
        landing: LandingSettings | None = None,
        protocol: Line | None = None,
        input_timeout: float = DEFAULT_INPUT_TIMEOUT,
        max_input_requests_per_round: int = DEFAULT_MAX_REQUESTS_PER_ROUND,
        max_input_requests_per_call: int = DEFAULT_MAX_REQUESTS_PER_CALL,
    ) -> None:
        super().__init__(
            str(config) if isinstance(config, Path) else config,
            confirm=confirm,
            confirm_policy=confirm_policy,
            env=env,
            prompt=prompt,
            interactive=interactive,
            restart=restart,
            start_timeout=start_timeout,
            history_size=history_size,
            input_timeout=input_timeout,
            max_input_requests_per_round=max_input_requests_per_round,
            max_input_requests_per_call=max_input_requests_per_call,
        )
        if server_url is not None and not office_id:
            raise ComputerStateError("office_id is required when server_url is given")
        self.name = name
        self.metrics = ComputerMetrics(self.server_states)
        self.add_update_listener(self.metrics.update)
        self.blob_store = BlobStore(blobs, owner=name)
        #: Where ``client:put_blob`` uploads land; refuses them all without a landing dir.
        self.landing = LandingStore(landing or LandingSettings())
        self._reaper: asyncio.Task[None] | None = None
        self.skills = SkillManager(
            skills or default_skill_settings(name),
            blobs=self.blob_store,
            on_change=lambda: self._announcer.announce(Event.UPDATE_SKILLS),
        )
        self.add_server_observer(self.skills)
        self._sweeper: asyncio.Task[None] | None = None
        self._wait_for_server = wait_for_server
        self._link: ComputerLink | None = None
        if server_url is not None:
            self._link = ComputerLink(
                self,
                blobs=self.blob_store,
                skills=self.skills,
                landing=self.landing,
                protocol=protocol,
                name=name,
                server_url=server_url,
                office_id=office_id or "",
                auth=auth,
                auth_hook=auth_hook,
                socketio_path=socketio_path,
                reconnect=reconnect,
                connect_timeout=connect_timeout,
            )
            self._link.on_blob_served = self.metrics.blob_served
            if allow_agents is not None:
                self._link.allowed_agents = AgentAllowList(allow_agents)

    @property
    def link(self) -> ComputerLink | None:
        """The Socket.IO link (None for a local-only Computer)."""
        return self._link

    async def __aenter__(self) -> Self:
        try:
            await asyncio.to_thread(self.blob_store.open)
            self._sweeper = asyncio.ensure_future(self.blob_store.run_sweeper())
            # A missing landing dir fails the start before any MCP server is started.
            await self.landing.open()
            self._reaper = asyncio.ensure_future(run_reaper(self.landing))
            await self.skills.start()
            await self._start_checked()
            if self._link is not None:
                try:
                    await self._link.connect(self._wait_for_server)
                except BaseException:
                    await self._link.close()
                    raise
        except BaseException:
            # A failed start leaves nothing behind either (spool, staged skills).
            await self._teardown()
            raise
        return self

    async def _start_checked(self) -> None:
        """Start the MCP servers while one connect checks the Server (:meth:`ComputerLink.probe`).

        A wrong URL, token or version fails at once instead of after the slowest MCP server
        (an ``npx`` one can take a minute) came up; the start is then cancelled and torn
        down. The real connect and join still wait for the MCP servers, so an office never
        sees this Computer with half its tools.
        """
        starting = asyncio.ensure_future(self.start())
        if self._link is not None:
            try:
                await self._link.probe(self._wait_for_server)
            except BaseException as exc:
                if not starting.done() and isinstance(exc, Exception):
                    # Said now: stopping an MCP server that is still starting takes a while.
                    _log.error("%s; stopping the MCP servers that were starting", exc)
                starting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await starting
                raise
        await starting

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._link is not None:
            with contextlib.suppress(Exception):
                await self._link.close()
        await self._teardown()

    async def _teardown(self) -> None:
        await self.stop()
        await self.skills.stop()
        await self._stop_sweeper()
        await asyncio.to_thread(self.blob_store.close)

    async def _stop_sweeper(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        await self.landing.aclose()
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None

    async def call_tool_round(
        self,
        tool_name: str,
        params: JsonObject | None = None,
        *,
        timeout: float = 60.0,
        req_id: str | None = None,
        agent: str | None = None,
        finish: ResultFinisher | None = None,
        extras: CallExtras | None = None,
    ) -> CallToolResult | InputAnswer:
        entry = self._catalog.lookup(tool_name).entry
        started = time.monotonic()
        result = await super().call_tool_round(
            tool_name,
            params,
            timeout=timeout,
            req_id=req_id,
            agent=agent,
            finish=finish,
            extras=extras,
        )
        if isinstance(result, CallToolResult):  # a round that asks is no call's end
            self.metrics.tool_call(
                entry.server if entry else None,
                entry.original if entry else None,
                result,
                time.monotonic() - started,
            )
        return result

    async def desktop(self, size: int | None = None, window: str | None = None) -> list[str]:
        desktops = await super().desktop(size, window)
        self.metrics.desktop_refreshes.inc()
        return desktops

    async def serve_forever(self) -> None:
        """Sleep until cancelled; raises the link's fatal error (e.g. a version refusal)."""
        while True:
            if self._link is not None and self._link.fatal_error is not None:
                raise self._link.fatal_error
            await asyncio.sleep(0.5)
