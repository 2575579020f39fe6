"""The fence: the only code of the Server that touches library internals.

The Server relays calls with less CPU than a bare python-socketio relay because it reaches
below the public API of python-engineio, python-socketio and redis-py: it overrides private
methods, reads undocumented attributes (``eio.sockets``, a socket's ``queue``, the manager's
``callbacks``, a redis connection's stream writer) and imports undocumented submodules. All
of that lives here, so a new release of one of those libraries can break the Server in one
room only, and ``tests/test_server_upstream_guard.py`` names the break before a user meets it.

Checked against **python-engineio 4.15.1, python-socketio 5.18.1 and redis 8.2.0**; the
upper bounds of the pins in ``packages/a2c-server/pyproject.toml`` stop just past those
versions. ``tools/check_latest.sh`` runs the guard tests and the Server suite against the
newest releases; when it passes, re-check the names here, then raise the versions above and
the pins together.

* :mod:`._engineio`: the per-session facts the Server asks for (queued bytes, transport,
  liveness), plus closing a session without waiting.
* :mod:`._lean_socket`: the lean WebSocket socket (no task per packet read) and
  :mod:`._lean_write`, its write side: a packet with nothing queued ahead of it is written
  in its sender's turn (no writer wake-up per packet).
* :mod:`._outqueue`: cutting a dropped session's TCP connection at once, through the ASGI
  ``send`` of python-engineio's WebSocket wrapper (uvicorn's protocol object and its
  transport; ``tests/test_server_floods_guard.py`` pins it), and emptying its queue.
* :mod:`._socketio`: :class:`ServerShim`, whose overrides of ``AsyncServer``'s private
  dispatch steps call hooks (``screen_client_event``, ``over_limit``, ``admit_session``...)
  that :class:`a2c_server._relay._sio.SmcpSocketServer` implements (on
  :class:`a2c_server._edge._sessions.SessionGuard`), and ``emit_call`` (a
  call to one sid without upstream's task per recipient); the compact packet class;
  the client manager's undocumented state.
* :mod:`._redis` (needs the ``redis`` extra, so it is imported by the multi-node modules,
  not here): :class:`RedisManagerShim` over ``AsyncRedisManager``'s private steps; and
  :mod:`._redis_conn`, the redis-py connection internals the publisher and the registry
  lookups write with, and the ``Sentinel`` behind a sentinel pool.

Rule for the rest of the package: no ``_name`` of those libraries, no override of one of
their private methods, no attribute their documentation does not name; ask the fence.
"""

from ._engineio import (
    abort_session,
    eio_packet_names,
    eio_packet_types,
    inbound_of,
    payload_packet_types,
    polling_sessions,
    polling_socket,
    queued_bytes,
    queued_packets,
    refuse_polling,
    transport_alive,
    transport_name,
    wait_drained,
)
from ._socketio import (
    CompactPacket,
    ServerShim,
    forget_callback,
    is_disconnecting,
    not_handled,
    rooms_of,
)

__all__ = [
    "CompactPacket",
    "ServerShim",
    "abort_session",
    "eio_packet_names",
    "eio_packet_types",
    "forget_callback",
    "inbound_of",
    "is_disconnecting",
    "not_handled",
    "payload_packet_types",
    "polling_sessions",
    "polling_socket",
    "queued_bytes",
    "queued_packets",
    "refuse_polling",
    "rooms_of",
    "transport_alive",
    "transport_name",
    "wait_drained",
]
