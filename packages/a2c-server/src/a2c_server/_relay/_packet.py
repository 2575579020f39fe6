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
and client in the process. The packet mechanics (upstream's ``Packet`` internals) live in
the fence, :class:`a2c_server._upstream.CompactPacket`; this module names the codec.
"""

from __future__ import annotations

from a2c_server import _json
from a2c_server._upstream import CompactPacket

__all__ = ["SmcpPacket"]


class SmcpPacket(CompactPacket, codec=_json):
    """``socketio.packet.Packet`` that encodes JSON-only payloads in one orjson call."""
