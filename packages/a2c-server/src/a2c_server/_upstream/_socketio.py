"""The python-socketio side of the fence: the server's private steps as hooks, the packet class.

python-socketio has no hooks for what the Server needs at the packet level (screening an
event before dispatch, bounding a client's outgoing queue, admitting an Engine.IO session
in time), so :class:`ServerShim` overrides the private methods where those steps happen.
Each override does upstream's call and asks one hook with a name of our own; the policy
(what is refused, what is logged, the limits) is :class:`a2c_server._relay._sio.SmcpSocketServer`'s.
The hooks' defaults keep upstream's behaviour.

:class:`CompactPacket` builds on ``socketio.packet.Packet`` (an undocumented module; the
documented ``serializer=`` argument takes a subclass of it). The client manager's
``pending_disconnect``, ``callbacks`` and ``rooms`` and the server's ``not_handled`` marker
are read through the functions at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import socketio
from socketio import packet as sio_packet

from ._engineio import make_lean, socket_of, wake_after_client_close

__all__ = [
    "CompactPacket",
    "ServerShim",
    "forget_callback",
    "is_disconnecting",
    "not_handled",
    "rooms_of",
]

#: What python-socketio may raise decoding a packet (too deep, a huge integer, a bad type byte).
UNDECODABLE = (ValueError, TypeError, KeyError, IndexError, RecursionError)


class ServerShim(socketio.AsyncServer):  # type: ignore[misc]
    """``socketio.AsyncServer`` whose private dispatch steps call overridable hooks.

    Hooks (each default keeps upstream's behaviour):

    * ``await screen_client_event(eio_sid, namespace, id, data) -> bool``: a client EVENT
      packet; False drops it (the hook answers the client itself, see :meth:`send_ack`).
    * ``undecodable_packet(eio_sid, exc)``: a packet python-socketio cannot decode.
    * ``over_limit(eio_sid) -> bool``: True holds back an outgoing packet (every send,
      broadcasts included, asks it).
    * ``admit_session(eio_sid, environ) -> bool`` then ``session_opened(eio_sid, environ)``:
      a new Engine.IO session; False refuses it. Admitted sessions get the lean WebSocket
      path (:func:`~a2c_server._upstream._engineio.make_lean`).
    * ``early_connect_refusal(eio_sid, namespace, environ, auth)``: a CONNECT packet of an
      Engine.IO session not yet in ``namespace``; a non-None answer is sent at once as
      the ``connect_error`` data, and no Socket.IO session is built (cheap refusals).
    * ``connect_handled(eio_sid, namespace)``: after a CONNECT packet was handled,
      admitted or refused.
    * ``session_closing(eio_sid)``: an Engine.IO session ends (before upstream's teardown).
    """

    #: The process's queued-output budget, handed to each new Engine.IO socket.
    output_budget: Any = None
    #: ``() -> InboundBudget | None``: each new Engine.IO socket's inbound budget.
    inbound_budget: Any = None

    # ------------------------------------------------------------------ hooks

    async def screen_client_event(self, eio_sid: str, namespace: str, id: Any, data: Any) -> bool:
        return True

    def undecodable_packet(self, eio_sid: str, exc: Exception) -> None:
        raise exc

    def over_limit(self, eio_sid: str) -> bool:
        return False

    def admit_session(self, eio_sid: str, environ: Any) -> bool:
        return True

    def session_opened(self, eio_sid: str, environ: Any) -> None:
        pass

    def early_connect_refusal(self, eio_sid: str, namespace: str, environ: Any, auth: Any) -> Any:
        return None

    def connect_handled(self, eio_sid: str, namespace: str) -> None:
        pass

    def session_closing(self, eio_sid: str) -> None:
        pass

    async def send_ack(self, eio_sid: str, namespace: str, id: Any, data: list[Any]) -> None:
        """Acknowledge a client's event ``id`` with ``data`` (the outgoing limit applies)."""
        pkt = self.packet_class(sio_packet.ACK, namespace=namespace, id=id, data=data)
        await self._send_packet(eio_sid, pkt)

    # ------------------------------------------------------- private overrides

    async def _handle_event(self, eio_sid: str, namespace: str | None, id: Any, data: Any) -> None:
        namespace = namespace or "/"
        if await self.screen_client_event(eio_sid, namespace, id, data):
            await super()._handle_event(eio_sid, namespace, id, data)

    async def _handle_eio_message(self, eio_sid: str, data: Any) -> None:
        try:
            await super()._handle_eio_message(eio_sid, data)
        except UNDECODABLE as exc:
            self.undecodable_packet(eio_sid, exc)

    async def _send_packet(self, eio_sid: str, pkt: Any) -> None:
        if not self.over_limit(eio_sid):
            await super()._send_packet(eio_sid, pkt)

    async def _send_eio_packet(self, eio_sid: str, eio_pkt: Any) -> None:
        # Broadcasts take this path: the packet is encoded once for the whole room.
        if not self.over_limit(eio_sid):
            await super()._send_eio_packet(eio_sid, eio_pkt)

    async def _handle_eio_connect(self, eio_sid: str, environ: Any) -> Any:
        if not self.admit_session(eio_sid, environ):
            return False
        make_lean(socket_of(self, eio_sid), self.output_budget,
                  self.inbound_budget() if self.inbound_budget else None)  # fmt: skip
        await super()._handle_eio_connect(eio_sid, environ)
        self.session_opened(eio_sid, environ)
        return None

    async def _handle_connect(self, eio_sid: str, namespace: str | None, data: Any) -> None:
        namespace = namespace or "/"
        refusal = None
        if self.manager.sid_from_eio_sid(eio_sid, namespace) is None:
            environ = self.environ.get(eio_sid)
            refusal = self.early_connect_refusal(eio_sid, namespace, environ, data)
        if refusal is None:
            await super()._handle_connect(eio_sid, namespace, data)
        else:
            # What upstream sends for a refusing connect handler, without the session it
            # would build (a sid, rooms, a handler task) only to tear it down again.
            pkt = self.packet_class(sio_packet.CONNECT_ERROR, data=refusal, namespace=namespace)
            await self._send_packet(eio_sid, pkt)
        self.connect_handled(eio_sid, namespace)

    async def _handle_eio_disconnect(self, eio_sid: str, reason: Any) -> None:
        self.session_closing(eio_sid)
        await super()._handle_eio_disconnect(eio_sid, reason)
        wake_after_client_close(self, eio_sid, reason)


class CompactPacket(sio_packet.Packet):  # type: ignore[misc]
    """``socketio.packet.Packet`` that encodes JSON-only payloads with one call of ``codec``.

    A subclass names its codec: ``class P(CompactPacket, codec=module)``. The module is
    upstream's ``Packet.json`` (``dumps``/``loads``) and also has ``compact(data) -> str |
    None``: the packet's body, or None for what must take upstream's path (bytes...).
    """

    codec: Any = None

    def __init_subclass__(cls, codec: Any = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if codec is not None:
            cls.codec = codec
            cls.json = codec  # what upstream encodes and decodes with

    def __init__(
        self,
        packet_type: int = sio_packet.EVENT,
        data: Any = None,
        namespace: str | None = None,
        id: int | None = None,
        binary: bool | None = None,
        encoded_packet: Any = None,
    ) -> None:
        self._body: str | None = None
        if binary is None and encoded_packet is None and data is not None:
            self._body = self.codec.compact(data)
            if self._body is not None:
                binary = False  # the codec encoded it, so there are no bytes to attach
        super().__init__(packet_type, data, namespace, id, binary, encoded_packet)

    def encode(self) -> Any:
        body = self._body
        if body is None:
            return super().encode()
        head = str(self.packet_type)
        if self.namespace is not None and self.namespace != "/":
            head += self.namespace + ","
        if self.id is not None:
            head += str(self.id)
        return head + body


# ------------------------------------------------------------ manager state


def is_disconnecting(sio: socketio.AsyncServer, sid: str, namespace: str) -> bool:
    """Whether python-socketio is tearing ``sid`` down right now."""
    return sid in sio.manager.pending_disconnect.get(namespace, ())


def forget_callback(sio: socketio.AsyncServer, sid: str, callback: Callable[..., None]) -> None:
    """Unregister ``callback`` as an ack callback of ``sid`` (it will not be called)."""
    callbacks = sio.manager.callbacks.get(sid)
    if not callbacks:
        return
    for ack_id, registered in list(callbacks.items()):
        if registered is callback:
            del callbacks[ack_id]


def rooms_of(sio: socketio.AsyncServer, namespace: str) -> dict[Any, dict[str, Any]]:
    """``{room: {sid: eio_sid}}`` of ``namespace`` on this process; room None holds every sid."""
    rooms: dict[Any, dict[str, Any]] = sio.manager.rooms.get(namespace, {})
    return rooms


def not_handled(sio: socketio.AsyncServer) -> object:
    """The marker a catch-all handler returns for "no handler" (no ack is sent)."""
    return sio.not_handled
