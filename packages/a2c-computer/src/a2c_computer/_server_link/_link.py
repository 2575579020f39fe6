"""The Socket.IO link of a Computer: it only translates between events and the core.

Connects polling-first with ``a2c_version`` added by the SDK, ``auth = {"role":
"computer", ...}``; joins the office; emits ``server:update_*``; on a version refusal reads
the authoritative body with one plain HTTP GET, disconnects and raises
``ProtocolVersionError``; after a transient loss it reconnects with back-off and re-joins
(the wait while its name is held is :mod:`~a2c_computer._server_link._rejoin`'s). It alone
owns the connection state. What it answers (the ``client:*`` events, a cancel, an Agent
leaving) is its :class:`~a2c_computer._server_link._link_handlers.LinkHandlers`, and the
calls received over it are its :class:`~a2c_computer._server_link._link_calls.LinkCalls`;
of the Computer's core it knows only :class:`~a2c_computer._server_link._port.CorePort`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx2
import socketio

from a2c_computer._blobs import BlobStore
from a2c_computer._exceptions import LinkError, ServerRefusedError
from a2c_computer._landing import LandingSettings, LandingStore
from a2c_computer._skills import SkillManager
from a2c_protocol import (
    NAMESPACE,
    PUT_BLOB_EXTENSION,
    RECLAIM_AUTH_KEY,
    REJOIN_BUDGET,
    EnterOfficeReq,
    Event,
    ExtensionEvent,
    LeaveOfficeReq,
    ProtocolVersionError,
    Role,
    UpdateComputerConfigReq,
    new_reclaim_secret,
    reconnect_delays,
    retry_line,
    to_wire,
    with_version_query,
)
from a2c_protocol._lines import LINE_0_2, LINE_VERSIONS, Line

from ._agent_allowlist import AgentAllowList
from ._decisions import (
    ConnectVerdict,
    ReconnectRefusal,
    judge_namespace_refusal,
    judge_reconnect_refusal,
    judge_refusal,
)
from ._link_calls import LinkCalls
from ._link_handlers import LinkHandlers
from ._port import CorePort
from ._rejoin import HeldName

__all__ = ["ComputerLink", "LinkError", "ServerRefusedError"]

logger = logging.getLogger("a2c_computer.link")


class ComputerLink:
    """One Computer's connection to a Server and its office."""

    def __init__(
        self,
        core: CorePort,
        *,
        blobs: BlobStore,
        skills: SkillManager | None = None,
        landing: LandingStore | None = None,
        name: str,
        server_url: str,
        office_id: str,
        auth: Mapping[str, Any] | None = None,
        auth_hook: Callable[[], Awaitable[Mapping[str, Any]] | Mapping[str, Any]] | None = None,
        socketio_path: str = "socket.io",
        reconnect: bool = True,
        connect_timeout: float = 30.0,
        protocol: Line | None = None,
        rejoin_budget: float = REJOIN_BUDGET,
    ) -> None:
        with_version_query(server_url)  # validates the URL and refuses a hand-set a2c_version
        self._core = core
        self.name = name
        self._url = server_url
        self.office_id = office_id
        self._auth = dict(auth or {})
        self._auth_hook = auth_hook
        self._path = socketio_path.strip("/") or "socket.io"
        self._reconnect = reconnect
        self._timeout = connect_timeout
        self._sio: socketio.AsyncClient | None = None
        self._joined = asyncio.Event()
        self._closing = False
        self._reconnect_task: asyncio.Task[None] | None = None
        self._refusal: Any = None
        self._cut_reason: str | None = None  # what notify:a2c_session_expired said
        self.fatal_error: BaseException | None = None
        self.connections = 0
        self._calls = LinkCalls(core)
        self._handlers = LinkHandlers(
            core,
            blobs=blobs,
            landing=landing or LandingStore(LandingSettings()),
            skills=skills,
            calls=self._calls,
            name=name,
            office_id=office_id,
            client=lambda: self._sio,
            line=lambda: self.line,
        )
        #: The protocol line spoken: 0.2 first; 0.4 after a 4008 that says the Server takes
        #: it (``retry_line``), or as pinned by ``protocol`` (``--protocol``).
        self.line: Line = protocol or LINE_0_2
        self._pinned = protocol is not None
        # Lets a reconnect take this Computer's name back from its own session on a node
        # that died (a2c_protocol._rejoin RJ1); one per link, never logged.
        self._reclaim = new_reclaim_secret()
        #: How long a re-join refused for a held name is retried before saying so loudly.
        self.rejoin_budget = rejoin_budget
        self._core.add_update_listener(self._on_update)

    @property
    def on_blob_served(self) -> Callable[[int], None] | None:
        """Told the raw size of every blob chunk served (the Computer's metrics)."""
        return self._handlers.on_blob_served

    @on_blob_served.setter
    def on_blob_served(self, told: Callable[[int], None] | None) -> None:
        self._handlers.on_blob_served = told

    @property
    def allowed_agents(self) -> AgentAllowList | None:
        """When set, only these Agents get answers (``--allow-agent``)."""
        return self._handlers.allowed_agents

    @allowed_agents.setter
    def allowed_agents(self, allowed: AgentAllowList | None) -> None:
        self._handlers.allowed_agents = allowed

    @property
    def joined(self) -> bool:
        return self._joined.is_set()

    async def wait_joined(self, timeout: float = 30.0) -> None:
        await asyncio.wait_for(self._joined.wait(), timeout)

    # -- connecting ----------------------------------------------------------

    async def _auth_payload(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self._auth_hook is not None:
            got = self._auth_hook()
            if isinstance(got, Awaitable):
                got = await got
            extra.update(got)
        # Announces the upload extension to a 0.2 Server (docs/compatibility.md).
        return {**self._auth, **extra, "role": Role.COMPUTER.value,
                "a2c_extensions": [PUT_BLOB_EXTENSION],
                RECLAIM_AUTH_KEY: self._reclaim}  # fmt: skip

    def _new_client(self, *, serving: bool = True) -> socketio.AsyncClient:
        # The Server bounds every message (--max-message-bytes); aiohttp's own 4 MiB default
        # would drop the link of a deployment that raised that limit.
        sio = socketio.AsyncClient(
            reconnection=False,
            handle_sigint=False,
            websocket_extra_options={"max_msg_size": 0},
        )
        sio.on("connect_error", self._on_connect_error, namespace=NAMESPACE)
        if not serving:  # a probe (see probe()): its end is no transport loss to recover
            return sio
        self._handlers.register(sio)

        async def on_disconnect(*args: Any) -> None:
            # A client this link dropped itself (a refused join, a dead transport being
            # replaced, close) is no loss to report or recover from; closing still ends
            # the calls whose answers can no longer go out.
            if sio is self._sio:
                await self._on_disconnect(*args)
            elif self._closing:
                self._calls.cancel_undeliverable(args[0] if args else "closed")

        sio.on("disconnect", on_disconnect, namespace=NAMESPACE)
        sio.on(ExtensionEvent.NOTIFY_SESSION_EXPIRED.value, self._on_session_expired,
               namespace=NAMESPACE)  # fmt: skip
        return sio

    async def _on_session_expired(self, data: Any = None) -> None:
        # The Server says why it is about to cut us (an extension, docs/compatibility.md).
        said = data.get("reason") if isinstance(data, dict) else None
        self._cut_reason = said[:200] if isinstance(said, str) and said else "token expired"

    async def _on_connect_error(self, *args: Any) -> None:
        self._refusal = args[0] if args else None

    async def probe(self, wait_for_server: float = 0.0) -> None:
        """Connect as :meth:`connect` would, then disconnect without joining.

        What a wrong URL, path, token or protocol version would raise at :meth:`connect` is
        raised here, so a Computer can check its Server while its MCP servers start instead
        of after (a version fallback found here is kept for the real connect).
        """
        await self.connect(wait_for_server, join=False)

    async def connect(self, wait_for_server: float = 0.0, *, join: bool = True) -> None:
        """Connect and join the office; raises ProtocolVersionError or LinkError.

        Transient failures (Server not reachable yet, 5xx) are retried with backoff for up
        to ``wait_for_server`` seconds; refusals are not.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(wait_for_server, 0.0)
        delays = reconnect_delays(initial=0.5, maximum=5.0)
        while True:
            try:
                await self._connect_once(join)
                return
            except _TransientLinkError:
                delay = next(delays)
                if loop.time() + delay > deadline:
                    raise
                logger.info("Server not reachable yet; retrying in %.1f s", delay)
                await asyncio.sleep(delay)

    async def _connect_once(self, join: bool = True) -> None:
        sio = self._new_client(serving=join)
        announced = LINE_VERSIONS[self.line]
        url = with_version_query(self._url, announced)
        self._refusal = None
        try:
            await sio.connect(
                url,
                namespaces=[NAMESPACE],
                transports=["polling", "websocket"],
                socketio_path=self._path,
                auth=await self._auth_payload(),
                wait_timeout=self._timeout,
            )
        except (socketio.exceptions.ConnectionError, RuntimeError, OSError) as exc:
            with contextlib.suppress(Exception):
                await sio.disconnect()
            verdict, remote = judge_namespace_refusal(self._refusal)
            if verdict is not ConnectVerdict.REFUSED:
                # The handshake URL's plain answer is authoritative for versions (4008).
                verdict, remote = await self._diagnose()
            if verdict is ConnectVerdict.VERSION_REFUSED and remote is not None:
                line = None
                if not self._pinned and isinstance(remote, ProtocolVersionError):
                    line = retry_line(remote, announced)
                if line is not None:
                    logger.info("Server refused protocol %s and accepts %s: speaking %s",
                                announced, LINE_VERSIONS[line], line)  # fmt: skip
                    self.line, self._pinned = line, True  # once: never back and forth
                    await self._connect_once(join)
                    return
                logger.error("Server refused protocol %s: %s", announced, remote)
                raise remote from exc
            if verdict is ConnectVerdict.REFUSED:
                raise ServerRefusedError(
                    f"the Server at {self._url} refused this Computer: {remote or exc}", remote
                ) from exc
            # aiohttp says "ssl:default" for every URL, http:// ones too: it only misleads.
            detail = f"{remote}" if remote is not None else str(exc).replace(" ssl:default", "")
            raise _TransientLinkError(f"cannot connect to {self._url}: {detail}") from exc
        if not join:
            with contextlib.suppress(Exception):
                await sio.disconnect()
            return
        self._sio = sio
        try:
            await self._join(sio)
        except BaseException:
            self._sio = None  # first: its disconnect below is ours, not a loss
            with contextlib.suppress(Exception):
                await sio.disconnect()
            raise
        self.connections += 1

    async def _diagnose(self) -> tuple[ConnectVerdict, Any]:
        """One plain GET of the handshake URL: the Server's authoritative answer."""
        base = self._url.rstrip("/")
        probe = with_version_query(
            f"{base}/{self._path}/?EIO=4&transport=polling", LINE_VERSIONS[self.line]
        )
        try:
            async with httpx2.AsyncClient(timeout=self._timeout) as client:
                response = await client.get(probe)
        except httpx2.HTTPError:
            return judge_refusal(None, {}, b"")
        return judge_refusal(response.status_code, dict(response.headers), response.content)

    async def _join(self, sio: socketio.AsyncClient) -> None:
        request = EnterOfficeReq(role=Role.COMPUTER, name=self.name, office_id=self.office_id)
        try:
            answer = await sio.call(
                Event.JOIN_OFFICE.value,
                to_wire(request),
                namespace=NAMESPACE,
                timeout=self._timeout,
            )
        except socketio.exceptions.TimeoutError as exc:
            raise LinkError("server:join_office was not answered") from exc
        ok, message = (
            (answer[0], answer[1] if len(answer) > 1 else None)
            if isinstance(answer, list | tuple)
            else (answer, None)
        )
        if ok is not True:
            reason = message if isinstance(message, str) else None
            raise ServerRefusedError(
                f"joining office {self.office_id!r} as {self.name!r} was refused: {message}",
                join_reason=reason,
            )
        self._joined.set()
        logger.info("joined office %s as %s (protocol %s)", self.office_id, self.name,
                    LINE_VERSIONS[self.line])  # fmt: skip

    async def close(self) -> None:
        """Leave the office and disconnect (no reconnect)."""
        self._closing = True
        self._core.remove_update_listener(self._on_update)
        if self._reconnect_task is not None:
            self._reconnect_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reconnect_task
        await self.leave()
        sio = self._sio
        self._sio = None
        if sio is None:
            return
        with contextlib.suppress(Exception):
            await sio.disconnect()

    async def leave(self) -> None:
        """Leave the office for good (no re-join after a reconnect) but stay connected, so
        answers still owed can go out; :meth:`close` disconnects."""
        self._closing = True
        sio = self._sio
        if sio is not None and self._joined.is_set() and sio.connected:
            with contextlib.suppress(Exception):
                await sio.call(
                    Event.LEAVE_OFFICE.value,
                    to_wire(LeaveOfficeReq(office_id=self.office_id)),
                    namespace=NAMESPACE,
                    timeout=5,
                )
        self._joined.clear()

    # -- after a transport loss -------------------------------------------------

    async def _on_disconnect(self, *args: Any) -> None:
        self._joined.clear()
        told, self._cut_reason = self._cut_reason, None
        self._calls.cancel_undeliverable(args[0] if args else "transport loss")
        if self._closing or not self._reconnect:
            return
        if told is not None:  # expected with short-lived tokens: not a warning
            fresh = " with a fresh token" if "token" in told else ""  # not for a shutdown
            logger.info("disconnected by the Server: %s; reconnecting%s", told, fresh)
        else:
            logger.warning("disconnected from the Server (%s); reconnecting",
                           args[0] if args else "transport loss")  # fmt: skip
        if self._reconnect_task is None or self._reconnect_task.done():
            self._reconnect_task = asyncio.ensure_future(self._reconnect_loop())

    async def _reconnect_loop(self) -> None:
        refused_for: str | None = None  # the refusal being waited out, logged once
        delays = reconnect_delays(initial=0.5, maximum=10.0)
        held = HeldName(self.rejoin_budget)
        delay = next(delays)
        while True:
            if self._closing:
                return
            await asyncio.sleep(delay)
            if self._is_closing():
                return
            delay = next(delays)
            old = self._sio
            self._sio = None
            if old is not None:
                with contextlib.suppress(Exception):
                    await old.disconnect()
            try:
                await self._connect_once()
            except ProtocolVersionError as exc:
                self.fatal_error = exc
                logger.error("reconnect refused for protocol version; giving up: %s", exc)
                return
            except ServerRefusedError as exc:
                kind = judge_reconnect_refusal(exc, credentials_renew=self._auth_hook is not None)
                if kind is ReconnectRefusal.NAME_HELD:
                    delay = held.next_delay(self.name, self.office_id, exc.join_reason)
                    continue
                if kind is ReconnectRefusal.TOKEN:
                    # A token renewed a little late: the next attempt reads it again.
                    message = str(exc.error)
                    if message != refused_for:
                        refused_for = message
                        logger.warning(
                            "reconnect refused (%s); retrying with back-off, reading the "
                            "token again each time",
                            message,
                        )
                    continue
                # A revoked grant or an office no longer granted needs an operator:
                # retrying would only hammer the Server.
                self.fatal_error = exc
                logger.error("reconnect refused by the Server; giving up: %s", exc)
                return
            except Exception as exc:
                logger.info("reconnect failed: %s", exc)
                continue
            if (wait := held.wait) is not None:
                waited = wait.waited(time.monotonic())
                logger.warning("re-joined office %s as %s after %.1f s of its name being held",
                               self.office_id, self.name, waited)  # fmt: skip
            else:
                logger.info("reconnected and re-joined office %s", self.office_id)
            return

    def _is_closing(self) -> bool:
        # A method, so the type checker does not assume the flag is unchanged across awaits.
        return self._closing

    # -- outgoing ------------------------------------------------------------

    async def _on_update(self, event: Event) -> None:
        sio = self._sio
        if sio is None or not self._joined.is_set():
            return
        try:
            await sio.emit(
                event.value,
                to_wire(UpdateComputerConfigReq(computer=self.name)),
                namespace=NAMESPACE,
            )
        except Exception as exc:
            logger.warning("could not emit %s: %s", event, exc)


class _TransientLinkError(LinkError):
    """A connection failure worth retrying (network, Server not up, 5xx)."""
