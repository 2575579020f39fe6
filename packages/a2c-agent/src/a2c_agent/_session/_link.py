"""The Agent's Socket.IO link: connect, close, refusal diagnosis and reconnection.

Pure decisions live in :mod:`a2c_agent._session._connection` and
:mod:`a2c_agent._session._lifecycle`;
this module only drives python-socketio with them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp
import httpx
import socketio

from a2c_agent._core import AgentCore
from a2c_agent._events import Events
from a2c_agent._exceptions import (
    AgentConnectionError,
    AgentStateError,
    ConnectionLostError,
)
from a2c_agent._upstream import namespace_refused
from a2c_protocol import (
    NAMESPACE,
    RECLAIM_AUTH_KEY,
    WS_CLOSE_VERSION_REJECTED,
    A2CError,
    ExtensionEvent,
    ProtocolVersionError,
    RemoteError,
    new_reclaim_secret,
    reconnect_delays,
    remote_error_of,
    retry_line,
    version_rejected_by_close,
    with_version_query,
)
from a2c_protocol._lines import LINE_VERSIONS

from ._connection import (
    AuthSource,
    connect_error_text,
    handshake_probe_url,
    handshake_refusal,
    refusal_is_final,
    resolve_auth,
)
from ._lifecycle import AgentState, Transition
from ._membership import Membership
from ._rejoin import Rejoin, safe_disconnect

logger = logging.getLogger("a2c_agent")

#: How long after a Server's notice of a cut the agent leaves by itself if it still has not
#: been cut (past a Server's default grace, 10 s, and the answers' 5 s after it).
_CUT_WITHIN = 30.0


def _close_code_recorder(record: Callable[[int], None]) -> type[aiohttp.ClientWebSocketResponse]:
    """A WebSocket response class that reports the close code the server sent.

    python-engineio does not surface close codes (a close during the handshake shows up as
    a bare TypeError), yet close 4900 must be told apart from other failures (R4).
    """

    class _Recorder(aiohttp.ClientWebSocketResponse):
        async def receive(self, timeout: float | None = None) -> Any:
            message = await super().receive(timeout)
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED) and isinstance(
                message.data, int
            ):
                record(message.data)
            elif self.close_code is not None:
                record(self.close_code)
            return message

    return _Recorder


class Link:
    """The Socket.IO link: open, close, diagnose refusals, reconnect (re-joining is
    :class:`~a2c_agent._session._rejoin.Rejoin`'s). Owns the URL, the connect settings
    and what the last connect and cut said."""

    def __init__(
        self,
        core: AgentCore,
        membership: Membership,
        events: Events,
        rejoin: Rejoin,
        inbound: Mapping[str, Callable[..., Awaitable[None]]],
        *,
        server_url: str,
        url: str,
        line_pinned: bool,
        auth: AuthSource,
        socketio_path: str,
        reconnect: bool,
        transports: tuple[str, ...],
        connect_timeout: float,
        reconnect_delay: float,
        reconnect_max_delay: float,
    ) -> None:
        self._channel, self._life, self._name = core.channel, core.life, core.name
        self._tasks, self._spawn = core.tasks, core.spawn
        self._membership, self._events, self._rejoin = membership, events, rejoin
        self._inbound = inbound
        self._server_url = server_url
        self.url = url
        self._line_pinned = line_pinned
        self._auth_source = auth
        self._socketio_path = socketio_path
        self._reconnect = reconnect
        self._transports = transports
        self._connect_timeout = connect_timeout
        self._reconnect_delay = reconnect_delay
        self._reconnect_max_delay = reconnect_max_delay
        self._reconnect_task: asyncio.Task[None] | None = None
        self._connect_error: object = None
        self._close_code: int | None = None
        self._cut_reason: str | None = None
        #: Why the Server last cut the connection (``AsyncAgent.last_cut``).
        self.last_cut: str | None = None
        # One per agent, never logged: see _session/_rejoin.py.
        self._reclaim = new_reclaim_secret()
        #: The Server announced it is about to cut this connection (RECONNECTING until it does).
        self._leaving = False

    async def open(self) -> None:
        """See :meth:`AsyncAgent.open`."""
        self._life.move(Transition.OPEN)
        self._channel.attach(self._make_client())
        try:
            await self._open_transport()
        except BaseException:
            if self._life.state is AgentState.CONNECTING:
                self._life.move(Transition.CONNECT_FAILED)
            raise
        if self._life.state is AgentState.CONNECTING:
            await self._mark_connected()

    async def close(self) -> None:
        """See :meth:`AsyncAgent.close`."""
        if self._life.state is AgentState.CLOSED:
            return
        try:
            if self._life.state is AgentState.CONNECTED and self._membership.office is not None:
                await self._membership.depart()
        finally:  # interrupted or not, the agent ends closed
            await self._close_now()

    async def _close_now(self) -> None:
        if self._life.state is AgentState.CLOSED:
            return
        self._life.move(Transition.CLOSE)
        current = asyncio.current_task()
        if self._reconnect_task is not None and self._reconnect_task is not current:
            self._reconnect_task.cancel()
            await asyncio.gather(self._reconnect_task, return_exceptions=True)
        self._reconnect_task = None
        for task in list(self._tasks):
            if task is not current:
                task.cancel()
        await asyncio.gather(*(t for t in self._tasks if t is not current), return_exceptions=True)
        if self._channel.sio is not None:
            await safe_disconnect(self._channel)
        self._channel.fail_pending(AgentStateError("the agent was closed"))
        self._events.close_streams()
        self._membership.vacate(tell_listeners=False)
        self._life.move(Transition.CLOSED)

    def _make_client(self) -> socketio.AsyncClient:
        def record(code: int) -> None:
            self._close_code = code

        recorder = _close_code_recorder(record)
        sio = socketio.AsyncClient(
            reconnection=False,  # the agent reconnects itself so it can re-join and refresh
            handle_sigint=False,
            request_timeout=self._connect_timeout,  # Engine.IO handshake/POST wait
            http_session=lambda: aiohttp.ClientSession(ws_response_class=recorder),
            # The Server bounds every message (--max-message-bytes); aiohttp's own 4 MiB
            # default would drop the link of a deployment that raised that limit.
            websocket_extra_options={"max_msg_size": 0},
        )
        sio.on("connect", self._on_connect, namespace=NAMESPACE)
        sio.on("connect_error", self._on_connect_error, namespace=NAMESPACE)
        sio.on("disconnect", self._on_disconnect, namespace=NAMESPACE)
        for event, handler in self._inbound.items():
            sio.on(event, handler, namespace=NAMESPACE)
        sio.on(ExtensionEvent.NOTIFY_SESSION_EXPIRED.value, self._on_session_expired,
               namespace=NAMESPACE)  # fmt: skip
        return sio

    async def _auth(self) -> dict[str, Any]:
        # The reclaim secret lets a reconnect take this agent's name and seat back from
        # its own session on a Server node that died (a2c_protocol._rejoin RJ1).
        return {**await resolve_auth(self._auth_source), RECLAIM_AUTH_KEY: self._reclaim}

    # ---------------------------------------------------------------- connecting

    async def _open_transport(self) -> None:
        sio = self._channel.client()
        self._connect_error = None
        self._close_code = None
        try:
            await sio.connect(
                self.url,
                auth=await self._auth(),
                transports=list(self._transports),
                namespaces=[NAMESPACE],
                socketio_path=self._socketio_path,
                wait_timeout=self._connect_timeout,
            )
        except asyncio.CancelledError:  # the caller gave up: leave no half-open transport
            await asyncio.shield(safe_disconnect(self._channel))
            raise
        except Exception as exc:  # the library fails with several types; map them all here
            refused_namespace = namespace_refused(sio)
            # C6: disconnect explicitly before raising, never rely on library defaults.
            await safe_disconnect(self._channel)
            error = await self._diagnose(exc, refused_namespace)
            line = None
            if isinstance(error, ProtocolVersionError) and not self._line_pinned:
                line = retry_line(error, LINE_VERSIONS[self._channel.line])
            if line is not None:
                spoken = LINE_VERSIONS[self._channel.line]
                logger.info("the server refused protocol %s and accepts %s: speaking %s",
                            spoken, LINE_VERSIONS[line], line)  # fmt: skip
                self._channel.line, self._line_pinned = line, True  # once: never back and forth
                self.url = with_version_query(self._server_url, LINE_VERSIONS[line])
                self._channel.sio = self._make_client()
                await self._open_transport()
                return
            if isinstance(error, ProtocolVersionError):
                logger.error(
                    "a2c protocol version refused: this SDK speaks %s, the server runs %s "
                    "(accepts %s..%s); not retrying",
                    LINE_VERSIONS[self._channel.line],
                    error.server_version or "?",
                    error.min_supported or "?",
                    error.max_supported or "?",
                )
            raise error from exc

    async def _diagnose(self, exc: Exception, refused_namespace: bool) -> A2CError:
        """The typed error for a failed connect (one plain GET for refused handshakes)."""
        captured = self._connect_error
        if refused_namespace:
            # The transport was accepted; the Server's connect handler refused us.
            return _error_from_refusal(captured) or AgentConnectionError(
                f"the server refused the connection: {captured or exc}"
            )
        probe = handshake_probe_url(self.url, self._socketio_path)
        try:
            async with httpx.AsyncClient(timeout=self._connect_timeout) as http:
                response = await http.get(probe)
        except httpx.HTTPError as http_exc:
            if self._close_code == WS_CLOSE_VERSION_REJECTED:
                return version_rejected_by_close()
            fallback = _error_from_refusal(captured)
            return fallback or AgentConnectionError(
                f"cannot connect to {self._server_url}: {connect_error_text(exc)} "
                f"({type(http_exc).__name__} on the handshake probe)"
            )
        error = handshake_refusal(response.status_code, dict(response.headers), response.content)
        if self._close_code == WS_CLOSE_VERSION_REJECTED and not isinstance(
            error, ProtocolVersionError
        ):
            # R4: the polling retry yielded no 4008 body; raise anyway, carrying 4900.
            return version_rejected_by_close()
        if error is not None:
            return error
        return _error_from_refusal(captured) or AgentConnectionError(
            f"cannot connect to {self._server_url}: {connect_error_text(exc)}"
        )

    async def _mark_connected(self) -> None:
        self._life.move(Transition.CONNECTED)
        sio = self._channel.sio
        if sio is not None and not sio.connected:
            # The link dropped between the handshake and now; its disconnect event was
            # ignored because we were not CONNECTED yet, so handle the loss here.
            await self._on_disconnect("lost while connecting")

    async def _on_connect(self) -> None:
        # Names the protocol line on every connect, the default one included, so a log says
        # which shapes the session speaks without knowing whether a 4008 fallback happened.
        logger.info("agent %s connected to %s (protocol %s)", self._name, self._server_url,
                    LINE_VERSIONS[self._channel.line])  # fmt: skip

    async def _on_connect_error(self, data: object = None) -> None:
        self._connect_error = data

    async def _on_session_expired(self, data: object = None) -> None:
        # The Server says why it is about to cut us (an extension, docs/compatibility.md).
        said = data.get("reason") if isinstance(data, dict) else None
        self._cut_reason = said[:200] if isinstance(said, str) and said else "token expired"
        if self._life.state is AgentState.CONNECTED and self._reconnect:
            # Nothing new goes out on a connection about to be cut: a request sent now could
            # be lost with it, unanswered, and nobody could tell whether it ran. New requests
            # wait for the next connection (RECONNECTING); those out still get their answers.
            self._leaving = True
            self.last_cut = self._cut_reason  # state listeners (watch) say why at once
            self._rejoin.cut_announced(self._cut_reason)
            self._life.move(Transition.LOST)
            self._spawn(self._cut_or_leave(self._life.links))

    async def _cut_or_leave(self, link: int) -> None:
        """A Server that announced the cut but never made it: leave by ourselves, once the
        requests still out had their time (a Server of this project cuts within its grace)."""
        await asyncio.sleep(_CUT_WITHIN)
        sio = self._channel.sio
        if self._leaving and self._life.links == link and sio is not None and sio.connected:
            logger.info("agent %s: the Server announced a cut %g s ago and did not make it; "
                        "reconnecting", self._name, _CUT_WITHIN)  # fmt: skip
            await safe_disconnect(self._channel)

    async def _on_disconnect(self, reason: object = None) -> None:
        told, self._cut_reason = self._cut_reason, None
        self.last_cut = told  # AsyncAgent.last_cut: `a2c-agent watch` says why it reconnects
        # Said to every request still out: each was sent, so a tool call may have run.
        after = "while the request was out; a tool call may have run: retry only an idempotent one"
        if told is not None:
            logger.info("agent %s disconnected by the Server: %s", self._name, told)
            lost = ConnectionLostError(f"disconnected by the Server: {told}, {after}",
                                       may_have_run=True)  # fmt: skip
        else:
            logger.info("agent %s disconnected (%s)", self._name, reason)
            lost = ConnectionLostError(f"connection lost ({reason}) {after}", may_have_run=True)
        self._channel.fail_pending(lost)
        if self._leaving:  # the announced cut: RECONNECTING already, reconnect now
            self._leaving = False
            if self._life.state is AgentState.RECONNECTING and self._reconnect_task is None:
                self._reconnect_task = asyncio.ensure_future(self._reconnect_loop())
            return
        if self._life.state is not AgentState.CONNECTED:
            return
        self._life.move(Transition.LOST)
        state = self._life.now()
        if state is AgentState.RECONNECTING and self._reconnect_task is None:
            self._reconnect_task = asyncio.ensure_future(self._reconnect_loop())
        elif state is AgentState.CLOSED:
            self._membership.vacate()

    async def _reconnect_loop(self) -> None:
        delays = reconnect_delays(initial=self._reconnect_delay, maximum=self._reconnect_max_delay)
        try:
            while self._life.now() is AgentState.RECONNECTING:
                await asyncio.sleep(next(delays))
                if self._life.now() is not AgentState.RECONNECTING:
                    return
                try:
                    await self._open_transport()
                except RemoteError as exc:
                    # The Server's verdict on this client (a refused token, a refused
                    # version): asking again cannot change its mind.
                    if not refusal_is_final(exc):
                        logger.info("reconnect attempt failed: %s", exc)
                        continue
                    if not isinstance(exc, ProtocolVersionError):  # that one is logged already
                        logger.error("the server refused to reconnect; giving up: %s", exc)
                    await self._rejoin.give_up(exc)
                    return
                except A2CError as exc:
                    logger.info("reconnect attempt failed: %s", exc)
                    continue
                if await self._rejoin.after_reconnect():
                    await self._mark_connected()
                    return
        finally:
            if self._reconnect_task is asyncio.current_task():
                self._reconnect_task = None


def _error_from_refusal(data: object) -> RemoteError | None:
    """A typed error from a ``connect_error`` payload, when it holds a flat ErrorPayload.

    python-socketio wraps a server's refusal as ``{"message": ..., "data": ...}``.
    """
    for candidate in (data, data.get("data") if isinstance(data, dict) else None):
        error = remote_error_of(candidate)
        if error is not None:
            return error
    return None
