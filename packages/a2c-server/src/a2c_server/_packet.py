"""The Socket.IO packet class the Server encodes with: one C call per outgoing packet.

python-socketio's ``Packet`` walks every outgoing payload in Python to find out whether it
holds bytes (``data_is_binary``: a list comprehension and a ``reduce`` per container), and
then walks it again in the JSON encoder. A forwarded tool call pays that twice, once to
the Computer and once for the ack to the Agent, and a large tool result pays it in
proportion to its size. :class:`SmcpPacket` asks :func:`a2c_server._json.compact` first:
orjson refuses bytes, so a payload it encodes has none, and the text it wrote is the
packet's body. Whatever it declines (bytes, the cases where orjson's text would differ
from the standard library's) takes python-socketio's own path unchanged, so the wire
stays byte for byte what the default packet class would send.

Passed to ``AsyncServer(serializer=SmcpPacket)``; it also keeps the codec off the
library's default class, which ``AsyncServer(json=...)`` would patch for every server
and client in the process.
"""

from __future__ import annotations

from typing import Any

from socketio import packet as sio_packet

from . import _json

__all__ = ["SmcpPacket"]


class SmcpPacket(sio_packet.Packet):  # type: ignore[misc]
    """``socketio.packet.Packet`` that encodes JSON-only payloads in one orjson call."""

    json = _json

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
            self._body = _json.compact(data)
            if self._body is not None:
                binary = False  # orjson encoded it, so there are no bytes to attach
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
