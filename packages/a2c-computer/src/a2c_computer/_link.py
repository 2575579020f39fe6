"""The Socket.IO link of a Computer: it only translates between events and the core.

Connects polling-first with ``a2c_version`` added by the SDK, ``auth = {"role":
"computer", ...}``; joins the office; answers the five ``client:*`` events (a model or a
flat ErrorPayload, never an exception, never a missing ack); cancels on
``notify:tool_call_cancel``; emits ``server:update_*``; reconnects with backoff and re-joins
after a transient loss; on a version refusal reads the authoritative body with one plain
HTTP GET, disconnects and raises ``ProtocolVersionError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx
import socketio

from a2c_protocol import (
    NAMESPACE,
    PROTOCOL_VERSION,
    AgentCallData,
    CallToolResult,
    CapabilityNotSupportedError,
    EnterOfficeReq,
    ErrorCode,
    ErrorPayload,
    Event,
    GetBlobReq,
    GetComputerConfigReq,
    GetDeskTopReq,
    GetDeskTopRet,
    GetResourcesReq,
    GetResourcesRet,
    GetSkillReq,
    GetSkillsReq,
    GetToolsReq,
    GetToolsRet,
    InvalidPayloadError,
    LeaveOfficeReq,
    McpServerNotFoundError,
    ProtocolVersionError,
    Role,
    ToolCallReq,
    UpdateComputerConfigReq,
    from_wire,
    reconnect_delays,
    to_wire,
    with_version_query,
)

from . import _otel as otel
from ._agent_allowlist import AgentAllowList
from ._answers import fit_answer, fit_tool_result
from ._blobs import BlobStore, serve_get_blob
from ._computer import ComputerCore
from ._config import agent_view, states_view
from ._decisions import ConnectVerdict, judge_namespace_refusal, judge_refusal
from ._exceptions import ComputerError, LinkError, ServerRefusedError
from ._extensions import CallExtras, ProgressForward
from ._link_calls import LinkCalls, notice_reason
from ._skills import SkillManager, serve_get_skill, serve_get_skills

__all__ = ["ComputerLink", "LinkError", "ServerRefusedError"]

logger = logging.getLogger("a2c_computer.link")


def _error(code: int, message: str) -> dict[str, Any]:
    data: dict[str, Any] = to_wire(ErrorPayload(code=code, message=message))
    return data


class ComputerLink:
    """One Computer's connection to a Server and its office."""

    def __init__(
        self,
        core: ComputerCore,
        *,
        blobs: BlobStore,
        skills: SkillManager | None = None,
        name: str,
        server_url: str,
        office_id: str,
        auth: Mapping[str, Any] | None = None,
        auth_hook: Callable[[], Awaitable[Mapping[str, Any]] | Mapping[str, Any]] | None = None,
        socketio_path: str = "socket.io",
        reconnect: bool = True,
        connect_timeout: float = 30.0,
    ) -> None:
        with_version_query(server_url)  # validates the URL and refuses a hand-set a2c_version
        self._core = core
        self._blobs = blobs
        #: Told the raw size of every blob chunk served (the Computer's metrics).
        self.on_blob_served: Callable[[int], None] | None = None
        #: When set, only these Agents get answers (``--allow-agent``).
        self.allowed_agents: AgentAllowList | None = None
        self._skills = skills
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
        self.fatal_error: BaseException | None = None
        self.connections = 0
        self._calls = LinkCalls(core)
        self._core.add_update_listener(self._on_update)

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
        return {**self._auth, **extra, "role": Role.COMPUTER.value}

    def _new_client(self) -> socketio.AsyncClient:
        # The Server bounds every message (--max-message-bytes); aiohttp's own 4 MiB default
        # would drop the link of a deployment that raised that limit.
        sio = socketio.AsyncClient(
            reconnection=False,
            handle_sigint=False,
            websocket_extra_options={"max_msg_size": 0},
        )
        handlers: dict[Event, Callable[[Any], Awaitable[Any]]] = {
            Event.TOOL_CALL: self._on_tool_call,
            Event.GET_TOOLS: self._on_get_tools,
            Event.GET_DESKTOP: self._on_get_desktop,
            Event.GET_RESOURCES: self._on_get_resources,
            Event.GET_CONFIG: self._on_get_config,
            Event.GET_BLOB: self._on_get_blob,
        }
        if self._skills is not None:
            handlers[Event.GET_SKILLS] = self._on_get_skills
            handlers[Event.GET_SKILL] = self._on_get_skill
        for event, handler in handlers.items():
            sio.on(event.value, self._guarded(event, handler), namespace=NAMESPACE)
        sio.on(Event.NOTIFY_TOOL_CALL_CANCEL.value, self._on_cancel, namespace=NAMESPACE)
        sio.on(Event.NOTIFY_LEAVE_OFFICE.value, self._on_leave_notice, namespace=NAMESPACE)
        sio.on("disconnect", self._on_disconnect, namespace=NAMESPACE)
        sio.on("connect_error", self._on_connect_error, namespace=NAMESPACE)
        return sio

    async def _on_connect_error(self, *args: Any) -> None:
        self._refusal = args[0] if args else None

    async def connect(self, wait_for_server: float = 0.0) -> None:
        """Connect and join the office; raises ProtocolVersionError or LinkError.

        Transient failures (Server not reachable yet, 5xx) are retried with backoff for up
        to ``wait_for_server`` seconds; refusals are not.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(wait_for_server, 0.0)
        delays = reconnect_delays(initial=0.5, maximum=5.0)
        while True:
            try:
                await self._connect_once()
                return
            except _TransientLinkError:
                delay = next(delays)
                if loop.time() + delay > deadline:
                    raise
                logger.info("Server not reachable yet; retrying in %.1f s", delay)
                await asyncio.sleep(delay)

    async def _connect_once(self) -> None:
        sio = self._new_client()
        url = with_version_query(self._url)
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
                logger.error("Server refused protocol %s: %s", PROTOCOL_VERSION, remote)
                raise remote from exc
            if verdict is ConnectVerdict.REFUSED:
                raise ServerRefusedError(
                    f"the Server at {self._url} refused this Computer: {remote or exc}", remote
                ) from exc
            # aiohttp says "ssl:default" for every URL, http:// ones too: it only misleads.
            detail = f"{remote}" if remote is not None else str(exc).replace(" ssl:default", "")
            raise _TransientLinkError(f"cannot connect to {self._url}: {detail}") from exc
        self._sio = sio
        try:
            await self._join(sio)
        except BaseException:
            with contextlib.suppress(Exception):
                await sio.disconnect()
            self._sio = None
            raise
        self.connections += 1

    async def _diagnose(self) -> tuple[ConnectVerdict, Any]:
        """One plain GET of the handshake URL: the Server's authoritative answer."""
        base = self._url.rstrip("/")
        probe = with_version_query(f"{base}/{self._path}/?EIO=4&transport=polling")
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as client:
                response = await client.get(probe)
        except httpx.HTTPError:
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
            raise ServerRefusedError(f"joining office {self.office_id!r} was refused: {message}")
        self._joined.set()
        logger.info("joined office %s as %s", self.office_id, self.name)

    async def _on_disconnect(self, *args: Any) -> None:
        self._joined.clear()
        self._calls.cancel_undeliverable(args[0] if args else "transport loss")
        if self._closing or not self._reconnect:
            return
        logger.warning(
            "disconnected from the Server (%s); reconnecting", args[0] if args else "transport loss"
        )
        if self._reconnect_task is None or self._reconnect_task.done():
            self._reconnect_task = asyncio.ensure_future(self._reconnect_loop())

    async def _reconnect_loop(self) -> None:
        for delay in reconnect_delays(initial=0.5, maximum=10.0):
            if self._closing:
                return
            await asyncio.sleep(delay)
            if self._is_closing():
                return
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
                # A revoked token stays revoked: retrying would only hammer the Server.
                self.fatal_error = exc
                logger.error("reconnect refused by the Server; giving up: %s", exc)
                return
            except Exception as exc:
                logger.info("reconnect failed: %s", exc)
                continue
            logger.info("reconnected and re-joined office %s", self.office_id)
            return

    def _is_closing(self) -> bool:
        # A method, so the type checker does not assume the flag is unchanged across awaits.
        return self._closing

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

    def _progress_forward(self, req: ToolCallReq) -> ProgressForward:
        async def emit(event: str, data: Any) -> None:
            sio = self._sio
            if sio is not None and sio.connected:
                await sio.emit(event, data, namespace=NAMESPACE)

        return ProgressForward(emit, agent=req.agent, req_id=req.req_id, computer=self.name)

    # -- incoming ------------------------------------------------------------

    def _guarded(
        self, event: Event, handler: Callable[[Any], Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        async def run(*args: Any) -> Any:
            data = args[0] if args else None
            refused = self.allowed_agents and self.allowed_agents.refusal(event.value, data)
            if refused:
                return refused
            try:
                answer = await handler(data)
                if event in _SIZED_BY_HANDLER:
                    return answer
                return fit_answer(event.value, answer, self._blobs.settings)
            except InvalidPayloadError as exc:
                return to_wire(exc.to_payload())
            except _WrongComputer as exc:
                return _error(ErrorCode.FORBIDDEN, str(exc))
            except Exception:
                logger.exception("handling %s failed", event)
                return _error(
                    ErrorCode.INTERNAL_ERROR, f"the Computer failed to handle {event.value}"
                )

        return run

    def _check_target(self, computer: str) -> None:
        if computer != self.name:
            raise _WrongComputer(f"this is Computer {self.name!r}, not {computer!r}")

    async def _on_tool_call(self, data: Any) -> Any:
        req = from_wire(ToolCallReq, data)
        self._check_target(req.computer)
        if req.timeout <= 0:
            return _error(ErrorCode.BAD_REQUEST, "timeout must be a positive number of seconds")
        mcp_server = self._core.tool_server(req.tool_name)

        async def finish(result: CallToolResult) -> CallToolResult:
            # Spooling hashes and writes megabytes: keep it off the event loop.
            return await asyncio.to_thread(
                fit_tool_result, result, tool=req.tool_name, store=self._blobs,
                mcp_server=mcp_server,
            )  # fmt: skip

        forward = self._progress_forward(req) if req.a2c_progress is True else None
        traced: contextlib.AbstractContextManager[otel.CallTrace | None] = contextlib.nullcontext(
            None
        )
        if otel.STATE.active and req.a2c_trace is not None:
            traced = otel.traced_call(req, self.name, self.office_id)
        try:
            # The sideband runs inside the call, so its log line and metrics see the answer sent.
            with self._calls.running(req.req_id, req.agent), traced as trace:
                extras = None
                if forward is not None or trace is not None:
                    extras = CallExtras(
                        progress=forward, mcp_meta=trace.mcp_meta if trace is not None else None
                    )
                result = await self._core.call_tool(req.tool_name, req.params,
                                                    timeout=req.timeout, req_id=req.req_id,
                                                    agent=req.agent, finish=finish,
                                                    extras=extras)  # fmt: skip
                if trace is not None:
                    trace.finished(result, mcp_server)
        finally:
            if forward is not None:
                forward.close()
        return to_wire(result)

    async def _on_get_tools(self, data: Any) -> Any:
        req = from_wire(GetToolsReq, data)
        self._check_target(req.computer)
        return to_wire(GetToolsRet(tools=self._core.tools(), req_id=req.req_id))

    async def _on_get_desktop(self, data: Any) -> Any:
        req = from_wire(GetDeskTopReq, data)
        self._check_target(req.computer)
        desktops = await self._core.desktop(req.desktop_size, req.window)
        return to_wire(GetDeskTopRet(desktops=desktops, req_id=req.req_id))

    async def _on_get_resources(self, data: Any) -> Any:
        req = from_wire(GetResourcesReq, data)
        self._check_target(req.computer)
        try:
            resources, cursor = await self._core.list_resources(req.mcp_server, req.cursor)
        except (McpServerNotFoundError, CapabilityNotSupportedError) as exc:
            return to_wire(exc.to_payload())
        except ComputerError as exc:
            return _error(ErrorCode.INTERNAL_ERROR, f"resources/list failed: {exc}")
        return to_wire(GetResourcesRet(resources=resources, req_id=req.req_id, next_cursor=cursor))

    async def _on_get_config(self, data: Any) -> Any:
        req = from_wire(GetComputerConfigReq, data)
        self._check_target(req.computer)
        view = agent_view(to_wire(self._core.config))
        return {**view, "a2c_server_states": states_view(self._core.server_states())}

    async def _on_get_blob(self, data: Any) -> Any:
        req = from_wire(GetBlobReq, data)
        self._check_target(req.computer)
        # One chunk read from the spool (page cache) is cheaper than a thread hop.
        answer = serve_get_blob(self._blobs, req)
        chunk = answer.get("blob")
        if isinstance(chunk, str) and self.on_blob_served is not None:
            self.on_blob_served(_decoded_size(chunk))
        return answer

    async def _on_get_skills(self, data: Any) -> Any:
        req = from_wire(GetSkillsReq, data)
        self._check_target(req.computer)
        assert self._skills is not None  # only registered with a skill manager
        return serve_get_skills(self._skills, req)

    async def _on_get_skill(self, data: Any) -> Any:
        req = from_wire(GetSkillReq, data)
        self._check_target(req.computer)
        assert self._skills is not None
        return await serve_get_skill(self._skills, req)

    async def _on_leave_notice(self, *args: Any) -> None:
        data = args[0] if args else None
        agent = data.get("agent") if isinstance(data, dict) else None
        if isinstance(agent, str):
            self._calls.agent_left(agent)

    async def _on_cancel(self, *args: Any) -> None:
        data = args[0] if args else None
        try:
            req = from_wire(AgentCallData, data)
        except InvalidPayloadError as exc:
            logger.warning("ignoring a malformed tool_call_cancel: %s", exc)
            return
        if self.allowed_agents is not None and not self.allowed_agents.allows(req.agent):
            logger.warning("ignoring a tool_call_cancel from Agent %r: not allowed", req.agent)
            return
        reason = notice_reason(data)
        if self._core.cancel(req.req_id, reason=reason):
            logger.info("cancelling tool call %s of %s (reason %s)", req.req_id, req.agent, reason)


#: Handlers that size their own answers (sideband, chunk clamping): no second measure.
_SIZED_BY_HANDLER = frozenset({Event.TOOL_CALL, Event.GET_BLOB})


def _decoded_size(b64: str) -> int:
    """Bytes a base64 text decodes to, without decoding it."""
    return len(b64) * 3 // 4 - (len(b64[-2:]) - len(b64[-2:].rstrip("=")))


class _WrongComputer(Exception):
    pass


class _TransientLinkError(LinkError):
    """A connection failure worth retrying (network, Server not up, 5xx)."""
