"""The python-socketio side of the fence: the server's private steps as hooks, the packet class.

python-socketio has no hooks for what the Server needs at the packet level (screening an
event before dispatch, bounding a client's outgoing queue, admitting an Engine.IO session
in time), so :class:`ServerShim` overrides the private methods where those steps happen.
Each override does upstream's call and asks one hook with a name of our own; the policy
(what is refused, what is logged, the limits) is :class:`a2c_server._relay._sio.SmcpSocketServer`'s
(the Engine.IO session hooks: :class:`a2c_server._edge._sessions.SessionGuard`'s).
The hooks' defaults keep upstream's behaviour.

:class:`CompactPacket` builds on ``socketio.packet.Packet`` (an undocumented module; the
documented ``serializer=`` argument takes a subclass of it). The client manager's
``pending_disconnect``, ``callbacks`` and ``rooms`` and the server's ``not_handled`` marker
are read through the functions at the end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

import socketio
from socketio import packet as sio_packet

from ._engineio import socket_of, wake_after_client_close
from ._lean_socket import make_lean

__all__ = [
    "CompactPacket",
    "ServerShim",
    "ack_pending",
    "event_head",
    "forget_callback",
    "is_disconnecting",
    "not_handled",
    "rooms_of",
]

_ACK = str(sio_packet.ACK)
_EVENT = str(sio_packet.EVENT)
_MAX_NAME = 256  # longer names are left to the decoder
_MAX_ID_DIGITS = 19  # python-socketio's ids count up from 1; longer is never pending

#: The manager emit that :meth:`ServerShim.emit_call` reproduces for one sid.
_PLAIN_EMIT: Final = socketio.AsyncManager.emit

#: What python-socketio may raise decoding a packet (too deep, a huge integer, a bad type byte).
UNDECODABLE = (ValueError, TypeError, KeyError, IndexError, RecursionError)


class ServerShim(socketio.AsyncServer):  # type: ignore[misc]
    """``socketio.AsyncServer`` whose private dispatch steps call overridable hooks.

    Hooks (each default keeps upstream's behaviour):

    * ``await screen_client_event(eio_sid, namespace, id, data, text) -> bool``: a client
      EVENT packet (``text``: the JSON text it was decoded from, None for a binary event);
      False drops it (the hook answers the client itself, see :meth:`send_ack`).
    * ``undecodable_packet(eio_sid, exc)``: a packet python-socketio cannot decode.
    * ``over_limit(eio_sid) -> bool``: True holds back an outgoing packet (every send,
      broadcasts included, asks it).
    * ``admit_session(eio_sid, environ) -> bool`` then ``session_opened(eio_sid, environ)``:
      a new Engine.IO session; False refuses it. Admitted sessions get the lean WebSocket
      path (:func:`~a2c_server._upstream._lean_socket.make_lean`).
    * ``early_connect_refusal(eio_sid, namespace, environ, auth)``: a CONNECT packet of an
      Engine.IO session not yet in ``namespace``; a non-None answer is sent at once as
      the ``connect_error`` data, and no Socket.IO session is built (cheap refusals).
    * ``connect_handled(eio_sid, namespace)``: after a CONNECT packet was handled,
      admitted or refused.
    * ``session_closing(eio_sid)``: an Engine.IO session ends (before upstream's teardown).
    * ``unhandled_event(eio_sid, namespace, name) -> bool``: an EVENT packet whose name
      (read from the raw text) has no handler of its own; True drops it undecoded.
    * (not a hook) :meth:`emit_call`: ``emit`` with an ack callback to one sid, without
      upstream's task per recipient.
    * ``stale_ack(eio_sid, ack_id) -> bool``: an ACK packet whose id (None when it has
      none) is not pending for the session (read from the raw text, before decoding);
      True drops it undecoded.
    """

    #: The process's queued-output budget, handed to each new Engine.IO socket.
    output_budget: Any = None
    #: ``() -> InboundBudget | None``: each new Engine.IO socket's inbound budget.
    inbound_budget: Any = None

    # ------------------------------------------------------------------ hooks

    async def screen_client_event(
        self, eio_sid: str, namespace: str, id: Any, data: Any, text: str | None = None
    ) -> bool:
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

    def stale_ack(self, eio_sid: str, ack_id: int | None) -> bool:
        return False

    def unhandled_event(self, eio_sid: str, namespace: str, name: str) -> bool:
        return False

    async def emit_call(
        self,
        event: str,
        data: Any,
        to: str,
        namespace: str,
        callback: Callable[..., None],
        ignore_queue: bool = False,
    ) -> None:
        """``emit(event, data, to=to, namespace=namespace, callback=callback)`` for one sid.

        Upstream's ``AsyncManager.emit`` starts a task per recipient and waits for them
        all, even for one sid: a task, a wait set and two extra loop trips per relayed
        call. With the plain manager, the packet it would build goes out straight (same
        ack id, same packet, same send path); any other manager (the multi-node one
        publishes) keeps upstream's path.
        """
        manager = self.manager
        if type(manager).emit is not _PLAIN_EMIT:
            await self.emit(event, data=data, to=to, namespace=namespace, callback=callback,
                            ignore_queue=ignore_queue)  # fmt: skip
            return
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info('emitting event "%s" to %s [%s]', event, to, namespace)
        eio_sid = manager.eio_sid_from_sid(to, namespace)
        if eio_sid is None:
            return  # not connected here: upstream sends nothing and registers no callback
        args = list(data) if isinstance(data, tuple) else [] if data is None else [data]
        pkt = self.packet_class(sio_packet.EVENT, namespace=namespace, data=[event, *args],
                                id=manager._generate_ack_id(to, callback))  # fmt: skip
        await self._send_packet(eio_sid, pkt)

    async def send_ack(self, eio_sid: str, namespace: str, id: Any, data: list[Any]) -> None:
        """Acknowledge a client's event ``id`` with ``data`` (the outgoing limit applies)."""
        pkt = self.packet_class(sio_packet.ACK, namespace=namespace, id=id, data=data)
        await self._send_packet(eio_sid, pkt)

    # ------------------------------------------------------- private overrides

    #: The text of the EVENT packet being dispatched, while it is (see _handle_eio_message).
    _event_text: str | None = None

    async def _handle_event(self, eio_sid: str, namespace: str | None, id: Any, data: Any) -> None:
        namespace = namespace or "/"
        text, self._event_text = self._event_text, None
        if await self.screen_client_event(eio_sid, namespace, id, data, text):
            await super()._handle_event(eio_sid, namespace, id, data)

    async def _handle_eio_message(self, eio_sid: str, data: Any) -> None:
        # An ack is decoded only to be looked up; one for an id nobody waits for (forged,
        # late, a flood) is refused from its head, before its payload costs a decode.
        if (isinstance(data, str) and data[:1] == _ACK and eio_sid not in self._binary_packet
                and not ack_pending(self, eio_sid, data)
                and self.stale_ack(eio_sid, ack_id_of(data))):  # fmt: skip
            return
        if isinstance(data, str) and data[:1] == _EVENT and eio_sid not in self._binary_packet:
            head = event_head(data)
            if (head is not None and head[1] not in self.handlers.get(head[0], ())
                    and self.unhandled_event(eio_sid, *head)):  # fmt: skip
                return
            # Upstream decodes this text and calls _handle_event without suspending in
            # between, so the screen gets the text it was decoded from (bounds in C, below).
            self._event_text = data
        try:
            await super()._handle_eio_message(eio_sid, data)
        except UNDECODABLE as exc:
            self.undecodable_packet(eio_sid, exc)
        finally:
            self._event_text = None

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


def forget_callback(
    sio: socketio.AsyncServer, sid: str, callback: Callable[..., None]
) -> list[int]:
    """Unregister ``callback`` as an ack callback of ``sid`` (it will not be called); the
    ack ids it was registered under."""
    callbacks = sio.manager.callbacks.get(sid)
    if not callbacks:
        return []
    forgotten = []
    for ack_id, registered in list(callbacks.items()):
        if registered is callback:
            del callbacks[ack_id]
            forgotten.append(ack_id)
    return forgotten


def _head(text: str) -> tuple[str, int, int] | None:
    """Namespace, start and end of the id digits of an undecoded packet (None: no comma)."""
    start, namespace = 1, "/"
    if text.startswith("/", 1):
        comma = text.find(",", 1)
        if comma < 0:
            return None
        namespace, start = text[1:comma].split("?", 1)[0], comma + 1
    end = start
    while end < len(text) and end - start <= _MAX_ID_DIGITS and "0" <= text[end] <= "9":
        end += 1
    return namespace, start, end


def event_head(text: str) -> tuple[str, str] | None:
    """``(namespace, event name)`` of an undecoded EVENT packet; None when unsure (escapes)."""
    head = _head(text)
    if head is None:
        return None
    namespace, _, end = head
    if not text.startswith('["', end):
        return None
    close = text.find('"', end + 2, end + 2 + _MAX_NAME)
    name = text[end + 2 : close]
    if close < 0 or "\\" in name:
        return None
    return namespace, name


def ack_id_of(text: str) -> int | None:
    """The id of the ACK packet ``text`` (undecoded), None when it has none."""
    head = _head(text)
    if head is None:
        return None
    _, start, end = head
    return int(text[start:end]) if start < end <= start + _MAX_ID_DIGITS else None


def ack_pending(sio: socketio.AsyncServer, eio_sid: str, text: str) -> bool:
    """Whether the ACK packet ``text`` (undecoded) answers an id ``eio_sid`` has pending.

    Reads the head as python-socketio's ``Packet.decode`` does: type, ``/namespace,``
    (a query after ``?`` ignored), then the id's digits.
    """
    head = _head(text)
    if head is None:
        return False
    namespace, start, end = head
    if end == start or end - start > _MAX_ID_DIGITS:
        return False
    sid = sio.manager.sid_from_eio_sid(eio_sid, namespace)
    pending: dict[int, Any] = sio.manager.callbacks.get(sid) or {} if sid is not None else {}
    return int(text[start:end]) in pending


def rooms_of(sio: socketio.AsyncServer, namespace: str) -> dict[Any, dict[str, Any]]:
    """``{room: {sid: eio_sid}}`` of ``namespace`` on this process; room None holds every sid."""
    rooms: dict[Any, dict[str, Any]] = sio.manager.rooms.get(namespace, {})
    return rooms


def not_handled(sio: socketio.AsyncServer) -> object:
    """The marker a catch-all handler returns for "no handler" (no ack is sent)."""
    return sio.not_handled
