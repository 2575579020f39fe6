"""Every library internal the fence (a2c_server._upstream) touches, pinned.

The fence was checked against python-engineio 4.15.1, python-socketio 5.18.1 and redis
8.2.0. A new release that renames, drops or reshapes one of these names fails here, with
a message saying what the Server would lose, instead of breaking a relay at run time.
``tools/check_latest.sh`` runs this file against the newest releases. No server is
started: real library objects are built and inspected (a private redis-server only for
the connection's stream reader and writer).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Callable
from typing import Any

import engineio
import pytest
import socketio
from engineio import exceptions as eio_exceptions
from engineio import packet as eio_packet
from engineio import payload as eio_payload
from engineio.async_server import AsyncServer as EngineServer
from engineio.async_socket import AsyncSocket
from redis import asyncio as aioredis
from redis._parsers import hiredis as hiredis_parser
from redis.asyncio.connection import Connection as RedisConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from socketio import packet as sio_packet
from socketio.async_pubsub_manager import AsyncPubSubManager

from a2c_server import _upstream
from a2c_server._cluster._multinode import _RedisManager
from a2c_server._cluster._resp import pack_commands
from a2c_server._relay._sio import SmcpSocketServer
from a2c_server._upstream import _engineio, _redis, _redis_conn, _socketio
from a2c_server._upstream._engineio import LeanSocket
from a2c_testkit.redis_server import RedisServer


def params(func: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(func).parameters)


def own_names(cls: type, upto: type) -> set[str]:
    """Names our classes define between ``cls`` and the upstream class ``upto``."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is upto:
            break
        names |= set(vars(klass))
    return names - {"__module__", "__qualname__", "__doc__", "__init__", "__annotations__",
                    "__dict__", "__weakref__", "__firstlineno__", "__static_attributes__",
                    "__init_subclass__", "__parameters__", "__orig_bases__"}  # fmt: skip


def test_the_fence_says_which_versions_it_was_checked_against() -> None:
    doc = _upstream.__doc__ or ""
    for name, version in (("python-engineio", "4.15.1"), ("python-socketio", "5.18.1"),
                          ("redis", "8.2.0")):  # fmt: skip
        assert f"{name} {version}" in doc, f"the fence's docstring does not name {name} {version}"


# ----------------------------------------------------------------- python-socketio


SERVER_OVERRIDES = {
    # private method: (parameters the shim's override takes, what breaks without it)
    "_handle_event": (["self", "eio_sid", "namespace", "id", "data"],
                      "client events reach handlers unscreened: a client can send 'connect' "
                      "or 'disconnect' and oversized payloads"),
    "_handle_eio_message": (["self", "eio_sid", "data"],
                            "an undecodable packet logs an ERROR traceback instead of a WARNING"),
    "_send_packet": (["self", "eio_sid", "pkt"],
                     "a client's outgoing queue is unbounded (no slow-consumer drop)"),
    "_send_eio_packet": (["self", "eio_sid", "eio_pkt"],
                         "room broadcasts bypass the outgoing queue limit"),
    "_handle_eio_connect": (["self", "eio_sid", "environ"],
                            "no admission timeout, no per-address limit, no lean WebSocket path"),
    "_handle_connect": (["self", "eio_sid", "namespace", "data"],
                        "a refused CONNECT keeps its transport; admitted ones keep their timer; "
                        "a wrong token builds a whole Socket.IO session to refuse it"),
    "_handle_eio_disconnect": (["self", "eio_sid", "reason"],
                               "admission timers leak; a polling client's disconnect hangs ~45 s"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SERVER_OVERRIDES))
def test_socketio_server_private_methods_the_shim_overrides(name: str) -> None:
    expected, breaks = SERVER_OVERRIDES[name]
    upstream = getattr(socketio.AsyncServer, name, None)
    assert upstream is not None, f"AsyncServer.{name} is gone: {breaks}"
    assert inspect.iscoroutinefunction(upstream), f"AsyncServer.{name} is no coroutine: {breaks}"
    assert params(upstream) == expected, f"AsyncServer.{name} changed its parameters: {breaks}"
    assert name in vars(_socketio.ServerShim), f"the shim no longer overrides {name}"


def test_socketio_dispatch_reaches_the_overridden_steps() -> None:
    sio = SmcpSocketServer()
    handlers = sio.eio.handlers
    why = "python-socketio no longer routes Engine.IO events through the overridden methods"
    assert handlers["connect"] == sio._handle_eio_connect, why
    assert handlers["message"] == sio._handle_eio_message, why
    assert handlers["disconnect"] == sio._handle_eio_disconnect, why
    message = inspect.getsource(socketio.AsyncServer._handle_eio_message)
    assert "await self._handle_event(" in message, f"{why} (events are not screened)"
    assert "await self._handle_connect(" in message, f"{why} (refused CONNECTs stay open)"
    assert "self.packet_class(encoded_packet=data)" in message, (
        "incoming packets are no longer decoded by the serializer class: the compact "
        "packet's codec is not used for decoding"
    )
    sends = inspect.getsource(socketio.AsyncManager.emit)
    assert "self.server._send_eio_packet(" in sends and "self.server._send_packet(" in sends, (
        "the manager sends without _send_packet/_send_eio_packet: the outgoing limit is bypassed"
    )


def test_socketio_server_attributes_the_fence_reads() -> None:
    sio = socketio.AsyncServer(serializer=_socketio.CompactPacket)
    assert isinstance(getattr(sio, "eio", None), engineio.AsyncServer), (
        "AsyncServer.eio is gone: no session facts (queue, transport), no closing of sessions"
    )
    assert getattr(sio, "packet_class", None) is _socketio.CompactPacket, (
        "AsyncServer.packet_class does not follow serializer=: refused events get no ack "
        "and outgoing packets lose the one-call encoder"
    )
    assert getattr(sio, "not_handled", None) is not None, (
        "AsyncServer.not_handled is gone: unknown events cannot be answered per rules"
    )
    manager = sio.manager
    assert isinstance(getattr(manager, "pending_disconnect", None), dict), (
        "manager.pending_disconnect is gone: is_disconnecting cannot tell python-socketio's "
        "own disconnect from a client's fake one (ghost sessions)"
    )
    assert isinstance(getattr(manager, "callbacks", None), dict), (
        "manager.callbacks is gone: timed-out calls pin their ack callbacks until disconnect"
    )
    assert isinstance(getattr(manager, "rooms", None), dict), (
        "manager.rooms is gone: the registry/rooms consistency check cannot run"
    )
    for method in ("sid_from_eio_sid", "eio_sid_from_sid", "is_connected", "is_pre_connected"):
        assert callable(getattr(manager, method, None)), f"manager.{method} is gone"


def test_socketio_connect_refusal_shape_the_early_refusal_copies() -> None:
    # The early refusal (a wrong token) sends a CONNECT_ERROR itself, with the data upstream
    # sends for a ConnectionRefusedError(message, payload), and reads the session's environ.
    why = "a client refused early would see another connect_error than one refused in full"
    source = inspect.getsource(socketio.AsyncServer._handle_connect)
    assert "packet.CONNECT_ERROR, data=fail_reason" in source, why
    assert "fail_reason = exc.error_args" in source, why
    refused = socketio.exceptions.ConnectionRefusedError("m", {"code": 401})
    assert refused.error_args == {"message": "m", "data": {"code": 401}}, why
    assert isinstance(getattr(socketio.AsyncServer(), "environ", None), dict), (
        "AsyncServer.environ is gone: the early refusal cannot see the peer"
    )


async def test_socketio_manager_state_has_the_shape_the_fence_walks() -> None:
    sio = socketio.AsyncServer()
    manager = sio.manager
    manager.set_server(sio)
    manager.initialize()
    sid = await manager.pre_connect("eio-1", "/smcp")
    await manager.connect(sid, "/smcp")
    assert _socketio.rooms_of(sio, "/smcp") == {None: {sid: "eio-1"}, sid: {sid: "eio-1"}}, (
        "manager.rooms is no longer {namespace: {room: {sid: eio_sid}}}: the consistency "
        "check reads rooms wrongly"
    )

    def callback(*_: Any) -> None:
        pass

    ack = manager._generate_ack_id(sid, callback)
    assert manager.callbacks[sid][ack] is callback, (
        "manager.callbacks is no longer {sid: {ack_id: callback}}: forget_callback and "
        "drop_ack_id cannot withdraw a callback"
    )
    # The stale-ack screen reads an ack's head the way Packet.decode does.
    assert isinstance(ack, int)
    for head in (f"3/smcp,{ack}[1]", f"3/smcp?x=1,{ack}[", f"3/smcp,{ack}"):
        assert _socketio.ack_pending(sio, "eio-1", head), head
    # ... and python-socketio reads the same id from the same head.
    assert sio_packet.Packet(encoded_packet=f"3/smcp,{ack}[1]").id == ack
    for head in (f"3/smcp,{ack + 1}[1]", "3/smcp,[1]", f"3/other,{ack}[1]", f"3{ack}[1]",
                 "3/smcp," + "9" * 30 + "[1]", "3/smcp"):  # fmt: skip
        assert not _socketio.ack_pending(sio, "eio-1", head), head
    assert _socketio.event_head('2/smcp,12["notify:x",{') == ("/smcp", "notify:x")
    assert _socketio.event_head('2["made:up"]') == ("/", "made:up")
    for text in ('2/smcp,["a\\"b",1]', "2/smcp,[1]", '2/smcp,["' + "x" * 300 + '"]', "2/smcp"):
        assert _socketio.event_head(text) is None, text
    assert sio_packet.Packet(encoded_packet='2/smcp,12["notify:x",1]').data[0] == "notify:x"
    assert isinstance(getattr(sio, "handlers", None), dict), (
        "AsyncServer.handlers is gone: the unhandled-event screen cannot see registered names"
    )
    assert isinstance(getattr(sio, "_binary_packet", None), dict), (
        "AsyncServer._binary_packet is gone: the stale-ack screen cannot tell a binary "
        "attachment from an ack"
    )
    assert _socketio.forget_callback(sio, sid, callback) == [ack]
    assert ack not in manager.callbacks[sid]
    manager.pre_disconnect(sid, "/smcp")
    assert _socketio.is_disconnecting(sio, sid, "/smcp"), (
        "manager.pending_disconnect no longer lists a sid being torn down: every disconnect "
        "handler run would be refused as a client's fake 'disconnect'"
    )


def test_socketio_packet_internals_the_compact_packet_builds_on() -> None:
    why = "SmcpPacket (one orjson call per outgoing packet) cannot be built"
    assert params(sio_packet.Packet.__init__) == [
        "self", "packet_type", "data", "namespace", "id", "binary", "encoded_packet"
    ], why  # fmt: skip
    assert sio_packet.Packet.json is not None, f"Packet.json is gone: {why}"
    assert (sio_packet.EVENT, sio_packet.ACK) == (2, 3), f"packet type numbers moved: {why}"
    pkt = sio_packet.Packet(sio_packet.ACK, data=["x"], namespace="/smcp", id=7)
    assert (pkt.packet_type, pkt.namespace, pkt.id) == (sio_packet.ACK, "/smcp", 7), why
    assert pkt.encode() == '3/smcp,7["x"]', (
        "upstream's packet head changed: SmcpPacket writes its own head and would differ"
    )


def test_our_names_on_socketio_subclasses_do_not_shadow_upstream() -> None:
    sio = socketio.AsyncServer()
    upstream = set(dir(socketio.AsyncServer)) | set(vars(sio))
    ours = own_names(SmcpSocketServer, socketio.AsyncServer) | set(vars(SmcpSocketServer()))
    ours -= set(vars(sio))  # instance state upstream sets itself
    overrides = set(SERVER_OVERRIDES) | {"call"}  # call: documented, deliberately wrapped
    clash = (ours & upstream) - overrides
    assert not clash, f"upstream now defines {sorted(clash)}: our server would override them"


# ----------------------------------------------------------------- python-engineio


def test_engineio_socket_private_method_lean_socket_overrides() -> None:
    breaks = "the lean WebSocket path (a task and two timers less per packet) is lost"
    handler = getattr(AsyncSocket, "_websocket_handler", None)
    assert handler is not None, f"AsyncSocket._websocket_handler is gone: {breaks}"
    assert params(handler) == ["self", "ws"], f"_websocket_handler changed: {breaks}"
    assert params(AsyncSocket.send) == ["self", "pkt"], f"AsyncSocket.send changed: {breaks}"
    assert params(AsyncSocket.receive) == ["self", "pkt"], f"AsyncSocket.receive changed: {breaks}"
    assert params(AsyncSocket.close) == ["self", "wait", "abort", "reason"], (
        "AsyncSocket.close changed: sessions cannot be closed without waiting for a drain"
    )
    assert inspect.iscoroutinefunction(AsyncSocket.check_ping_timeout), breaks
    upgrade = inspect.getsource(AsyncSocket._upgrade_websocket)
    assert "self._websocket_handler" in upgrade, f"the upgrade no longer runs it: {breaks}"
    # close() and poll() are overridden on purpose: a ping timeout cuts the connection, and
    # the queued-bytes count is released as a long-poll takes packets.
    assert params(AsyncSocket.poll) == ["self"], "AsyncSocket.poll changed: queued bytes drift"
    own = own_names(LeanSocket, AsyncSocket) - {"send", "receive", "_websocket_handler",
                                                "close", "poll"}  # fmt: skip
    clash = own & set(dir(AsyncSocket))
    assert not clash, f"upstream now defines {sorted(clash)}: LeanSocket would override them"


async def test_engineio_socket_attributes_the_fence_reads() -> None:
    sio = socketio.AsyncServer()
    eio = sio.eio
    socket = AsyncSocket(eio, "s1")
    for name in ("server", "sid", "queue", "last_ping", "connected", "upgrading", "upgraded",
                 "closing", "closed"):  # fmt: skip
        assert hasattr(socket, name), (
            f"AsyncSocket.{name} is gone: the lean socket, the polling screen or the session "
            "facts (queued bytes, transport, alive) read it"
        )
    assert isinstance(socket.queue, asyncio.Queue), "the socket's queue is no asyncio.Queue"
    assert hasattr(socket.queue, "_queue"), (
        "asyncio.Queue._queue is gone: a client's queued bytes cannot be counted (no "
        "slow-consumer drop)"
    )
    eio.sockets["s1"] = socket
    for _ in range(20):
        socket.queue.put_nowait(eio_packet.Packet(eio_packet.MESSAGE, data="x" * 10))
    assert _engineio.queued_bytes(sio, "s1") == 200, (
        "queued packets lost their data: a client's queued bytes are miscounted"
    )
    assert _engineio.queued_packets(sio, "nobody", "/smcp") == 0
    for name in ("sockets", "handlers", "async_handlers", "logger", "ping_interval",
                 "ping_timeout", "max_http_buffer_size"):  # fmt: skip
        assert hasattr(eio, name), f"engineio.AsyncServer.{name} is gone: the lean socket needs it"
    assert isinstance(eio.sockets, dict), "AsyncServer.sockets is no {eio_sid: socket} dict"
    for reason in ("SERVER_DISCONNECT", "CLIENT_DISCONNECT", "TRANSPORT_CLOSE", "TRANSPORT_ERROR"):
        assert hasattr(eio.reason, reason), f"AsyncServer.reason.{reason} is gone"


def test_engineio_makes_plain_sockets_the_fence_can_make_lean() -> None:
    source = inspect.getsource(EngineServer._handle_connect)
    assert "async_socket.AsyncSocket(self, sid)" in source, (
        "python-engineio builds its sockets differently: make_lean no longer finds an "
        "AsyncSocket to swap (the lean WebSocket path is lost)"
    )


def test_engineio_packet_and_payload_modules_the_fence_uses() -> None:
    assert list(_engineio.eio_packet_names) == [
        "OPEN", "CLOSE", "PING", "PONG", "MESSAGE", "UPGRADE", "NOOP"
    ], "Engine.IO packet names moved: the polling screen refuses the wrong packets"  # fmt: skip
    for name, number in _engineio.eio_packet_types.items():
        assert _engineio.eio_packet_names[number] == name, "packet numbers are no longer indexes"
    pkt = eio_packet.Packet(encoded_packet="4hello")
    assert (pkt.packet_type, pkt.data) == (eio_packet.MESSAGE, "hello"), (
        "engineio.packet.Packet no longer decodes: the lean socket cannot read frames"
    )
    assert eio_packet.Packet(eio_packet.PONG, data="probe").encode() == "3probe", (
        "engineio.packet.Packet no longer encodes: the WebSocket upgrade probe fails"
    )
    payload = eio_payload.Payload(encoded_payload="4a\x1e1")
    assert [p.packet_type for p in payload.packets] == [eio_packet.MESSAGE, eio_packet.CLOSE], (
        "engineio.payload.Payload changed: long-polling POSTs cannot be screened"
    )
    for name in ("UnknownPacketError", "SocketIsClosedError"):
        assert issubclass(getattr(eio_exceptions, name), Exception), f"engineio {name} is gone"


# ----------------------------------------------------------------------- Redis


MANAGER_OVERRIDES = {
    "_publish": (["self", "data"], "messages go to the shared channel only, with replies"),
    "_listen": (["self"], "the node channel is not heard: acks and addressed calls are lost"),
    "_handle_emit": (["self", "message"],
                     "progress reports and traced calls from other nodes are not intercepted"),
    "_redis_connect": (["self"], "each Redis outage leaks the old clients' connections"),
    "_thread": (["self"], "the listener is upstream's: a message costs a generator step more"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MANAGER_OVERRIDES))
def test_redis_manager_private_methods_the_shim_overrides(name: str) -> None:
    expected, breaks = MANAGER_OVERRIDES[name]
    upstream = getattr(socketio.AsyncRedisManager, name, None)
    assert upstream is not None, f"AsyncRedisManager.{name} is gone: {breaks}"
    assert params(upstream) == expected, f"AsyncRedisManager.{name} changed: {breaks}"
    assert name in vars(_redis.RedisManagerShim), f"the shim no longer overrides {name}"


def test_redis_manager_listener_calls_the_overridden_steps() -> None:
    # RedisManagerShim._thread is upstream's listener loop without its per-message extras:
    # it must still be the task upstream starts, and dispatch as upstream's does.
    assert "self.server.start_background_task(self._thread)" in inspect.getsource(
        AsyncPubSubManager.initialize
    ), "upstream no longer starts its listener as _thread: ours would not run"
    source = inspect.getsource(AsyncPubSubManager._thread)
    why = "python-socketio's listener dispatches differently than RedisManagerShim._dispatch"
    assert "data = self.json.loads(message)" in source, f"{why} (decoding)"
    assert "if data['method'] == 'callback':" in source, f"{why} (acks)"
    assert "await self._handle_callback(data)" in source, f"{why} (_handle_callback)"
    for method, handler in sorted(_redis._HANDLERS.items()):
        assert f"if data['method'] == '{method}':" in source, f"{why} ({method})"
        assert f"await self.{handler}(data)" in source, f"{why} ({handler})"
        assert params(getattr(socketio.AsyncRedisManager, handler)) == ["self", "message"]
    assert source.count("await self._handle_") == len(_redis._HANDLERS) + 1, (
        f"{why}: upstream handles a method more"
    )
    assert "data.get('host_id') != self.host_id" in source, (
        "upstream no longer skips its own messages by host_id: the node id as host_id "
        "would not address acks"
    )
    assert inspect.isasyncgenfunction(socketio.AsyncRedisManager._listen), f"{why} (_listen kind)"
    assert params(socketio.AsyncRedisManager._generate_ack_id) == ["self", "sid", "callback"], (
        "BaseManager._generate_ack_id changed: a call to another node cannot register its ack"
    )


def test_redis_manager_attributes_the_shim_reads() -> None:
    manager = _RedisManager("redis://127.0.0.1:1/0", channel="g:socketio", node_id="node-g",
                            locate={}.get, redis_options={})  # fmt: skip
    assert manager.host_id == "node-g", "upstream overwrote host_id after __init__"
    assert manager.channel == "g:socketio", "the manager's channel setting is not kept"
    for name in ("pubsub", "redis", "callbacks"):
        assert hasattr(manager, name), (
            f"AsyncRedisManager.{name} is gone: the listener or the ack bookkeeping needs it"
        )
    manager._redis_connect()  # builds clients; connects lazily
    assert isinstance(manager.redis, aioredis.Redis), "upstream's client is no redis.asyncio.Redis"
    assert isinstance(manager.pubsub, aioredis.client.PubSub), "upstream's pubsub changed kind"
    assert "connection" in vars(manager.pubsub), (
        "PubSub.connection is gone: the listener cannot read messages off the connection"
    )
    assert "thread" in inspect.getsource(AsyncPubSubManager.initialize), (
        "the listener task is no longer kept as manager.thread: aclose() cannot stop it"
    )
    upstream = set(dir(socketio.AsyncRedisManager)) | set(vars(socketio.AsyncRedisManager()))
    ours = own_names(_RedisManager, socketio.AsyncRedisManager) | set(vars(manager))
    ours -= set(vars(socketio.AsyncRedisManager()))
    clash = (ours & upstream) - set(MANAGER_OVERRIDES) - {"emit"}  # emit: documented, wrapped
    assert not clash, f"upstream now defines {sorted(clash)}: our manager would override them"


def test_redis_connection_internals_are_where_the_fence_reads_them() -> None:
    assert params(RedisConnection.read_response)[:3] == ["self", "disable_decoding", "timeout"]
    assert "push_request" in params(RedisConnection.read_response), (
        "read_response lost push_request: over RESP3 the listener would skip every message"
    )
    assert "check_health" in params(RedisConnection.send_packed_command), (
        "send_packed_command lost check_health: a PING would go out on a CLIENT REPLY OFF link"
    )
    pool = aioredis.ConnectionPool.from_url("redis://127.0.0.1:1/0", socket_timeout=3)
    assert pool.connection_class is RedisConnection and pool.connection_kwargs["port"] == 1, (
        "ConnectionPool.connection_class/connection_kwargs changed: the publisher and the "
        "lookups cannot open a connection of their own"
    )
    conn = _redis_conn.fresh_connection(pool, socket_timeout=None)
    assert conn.socket_timeout is None and conn.port == 1
    assert _redis_conn.pool_option(pool, "socket_timeout") == 3, (
        "the pool's socket_timeout is not in connection_kwargs: registry lookups would wait "
        "5 s instead of the configured timeout"
    )


async def test_redis_sentinel_pools_are_where_the_fence_reads_them() -> None:
    from redis.asyncio.sentinel import Sentinel, SentinelManagedConnection

    sentinel = Sentinel([("127.0.0.1", 1)])
    client = sentinel.master_for("svc", socket_timeout=3)
    assert _redis_conn.sentinel_of(client) is sentinel, (
        "SentinelConnectionPool.sentinel_manager moved: the manager would leave a Sentinel "
        "client (and its connections) open after each Redis outage"
    )
    assert _redis_conn.sentinel_of(aioredis.Redis.from_url("redis://127.0.0.1:1/0")) is None
    # The publisher and the lookups make their own connection from a sentinel pool: it
    # must still ask the sentinels for the primary when it connects.
    conn = _redis_conn.fresh_connection(client.connection_pool, socket_timeout=None)
    assert isinstance(conn, SentinelManagedConnection) and conn.socket_timeout is None
    assert conn.connection_pool.service_name == "svc" and conn.connection_pool.is_master
    assert _redis_conn.connection_address(conn) is None  # not connected
    conn.host, conn.port = "127.0.0.1", 7
    assert (conn.host, conn.port) == ("127.0.0.1", 7), "a connection's address moved"
    await client.aclose()
    assert hasattr(sentinel, "aclose") or isinstance(sentinel.sentinels, list)
    await _redis_conn.close_sentinel(sentinel)


async def test_redis_connection_stream_reader_and_writer_on_a_real_connection(
    redis: RedisServer,
) -> None:
    pool = aioredis.ConnectionPool.from_url(redis.url)
    conn = _redis_conn.fresh_connection(pool)
    try:
        assert _redis_conn.connection_writer(conn) is None, "a new connection already has a writer"
        await conn.connect()
        assert isinstance(_redis_conn.connection_writer(conn), asyncio.StreamWriter), (
            "Connection._writer is no StreamWriter: PUBLISH batches and registry lookups "
            "cannot be written without an await"
        )
        assert isinstance(getattr(conn, "_reader", None), asyncio.StreamReader), (
            "Connection._reader is gone: the publisher cannot see Redis close its connection"
        )
        assert not _redis_conn.closed_by_peer(conn)
        _redis_conn.write_packed(conn, pack_commands([("PING",), ("ECHO", "fence")]))
        assert await conn.read_response() in (b"PONG", "PONG")
        assert await conn.read_response() in (b"fence", "fence"), (
            "a batch written to the connection's stream writer is not answered in order"
        )
        _redis_conn.abort_connection(conn)
        await asyncio.sleep(0)
    finally:
        await conn.disconnect()
        await pool.disconnect()


async def test_redis_pubsub_replies_are_read_off_hiredis_as_the_listener_does(
    redis: RedisServer,
) -> None:
    # read_replies takes every reply a socket read brought off redis-py's hiredis parser
    # (_reader, read_from_socket, _connected): without that the listener falls back to one
    # read_response per message, and a closed connection must still end the read.
    assert hiredis_parser.HIREDIS_AVAILABLE, "hiredis is a dependency of a2c-server[redis]"
    client = aioredis.Redis.from_url(redis.url, protocol=2)
    publisher = aioredis.Redis.from_url(redis.url)
    pubsub = client.pubsub()
    try:
        await pubsub.subscribe("fence:r")
        conn = pubsub.connection
        assert isinstance(conn._parser, hiredis_parser._AsyncHiredisParser), (
            "redis-py no longer reads with _AsyncHiredisParser: read_replies takes its slow path"
        )
        parser = conn._parser
        assert parser._reader is not None and parser._connected, "the parser's state moved"
        async with publisher.pipeline(transaction=False) as pipe:
            for text in ("one", "two", "three"):
                pipe.publish("fence:r", text)
            await pipe.execute()
        replies: list[Any] = []
        while len(replies) < 4:
            replies += await asyncio.wait_for(_redis.read_replies(conn), 30)
        assert replies == [[b"subscribe", b"fence:r", 1],
                           *([b"message", b"fence:r", t] for t in (b"one", b"two", b"three"))]  # fmt: skip
        host, port = conn._writer.get_extra_info("sockname")[:2]
        await publisher.client_kill(f"{host}:{port}")  # Redis closes the pub/sub connection
        with pytest.raises(RedisConnectionError):
            await asyncio.wait_for(_redis.read_replies(conn), 30)
    finally:
        await pubsub.aclose()
        await client.aclose()
        await publisher.aclose()


@pytest.mark.parametrize("data", [[{"tool_name": "echo"}], [{"a": 1}, "two"], [], [None]], ids=repr)
async def test_redis_manager_delivers_a_call_from_another_node_as_upstream_does(
    data: list[Any],
) -> None:
    # RedisManagerShim._deliver_call replaces upstream's _handle_emit for a call to one
    # sid of this node (no task and wait set per call): the packet the Computer gets, the
    # ack registered for it and what that ack publishes back must stay upstream's.
    manager = _RedisManager("redis://127.0.0.1:1/0", channel="d:socketio", node_id="node-b",
                            locate={}.get, redis_options={})  # fmt: skip
    sio = socketio.AsyncServer(client_manager=manager)
    sid = await manager.pre_connect("eio-1", "/smcp")
    await manager.connect(sid, "/smcp")
    sent: list[tuple[str, str]] = []
    published: list[dict[str, Any]] = []

    async def send_packet(eio_sid: str, pkt: Any) -> None:
        sent.append((eio_sid, pkt.encode()))

    async def publish(message: dict[str, Any]) -> None:
        published.append(message)

    texts: list[tuple[str, str | bytes]] = []
    sio._send_packet = send_packet  # type: ignore[method-assign]
    manager._publish = publish  # type: ignore[method-assign]
    # Ours, while node-a's channel is not known to be heard (a coroutine, as upstream's)...
    manager.publish_envelope = publish  # type: ignore[method-assign]
    # ... and once it is: the envelope's text, published at once.
    manager._publisher.publish = lambda channel, text: texts.append((channel, text))  # type: ignore[method-assign]
    message = {"method": "emit", "event": "client:tool_call", "data": data,
               "namespace": "/smcp", "room": sid, "callback": ["agent-sid", "/smcp", 7],
               "host_id": "node-a"}  # fmt: skip
    await AsyncPubSubManager._handle_emit(manager, dict(message))
    await manager._handle_emit(dict(message))
    assert [eio for eio, _ in sent] == ["eio-1", "eio-1"]
    theirs, ours = (text for _, text in sent)
    assert theirs.startswith("2/smcp,1[") and ours == "2/smcp,2" + theirs[len("2/smcp,1") :], (
        "a call from another node reaches the Computer as a packet upstream would not send"
    )
    for ack in (1, 2):
        await manager.trigger_callback(sid, ack, [{"content": []}])
    upstream_ack, our_ack = published
    assert our_ack == upstream_ack == {
        "method": "callback", "host_id": "node-a", "sid": "agent-sid", "namespace": "/smcp",
        "id": 7, "args": ({"content": []},),
    }, "the Computer's ack goes back to the calling node differently than upstream's"  # fmt: skip
    if data == [None]:
        return  # upstream's delivery, both times
    manager._publisher.audience.learn("d:socketio:node:node-a", 1, time.monotonic())
    await manager._handle_emit(dict(message))
    await manager.trigger_callback(sid, 3, [{"content": []}])
    ((channel, text),) = texts
    assert channel == "d:socketio:node:node-a", "the ack is not addressed to the calling node"
    assert json.loads(text) == {**upstream_ack, "args": [{"content": []}]}, (
        "the ack published at once is not the message upstream's path publishes"
    )
