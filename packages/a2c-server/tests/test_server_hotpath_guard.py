"""The relay's shortcuts past python-socketio's emit and python-engineio's writer, pinned.

:meth:`ServerShim.emit_call` builds the packet ``AsyncManager.emit`` would (the same ack
id from the manager, the same packet class, the same send step) without its task per
recipient; these tests fail when upstream's emit changes what it sends or registers.
"""

from __future__ import annotations

import inspect
from typing import Any

import socketio

from a2c_server._relay._sio import SmcpSocketServer

NS = "/smcp"


class Recording(SmcpSocketServer):
    """The real server, its outgoing packets kept instead of sent (no transport here)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[str, str]] = []

    async def _send_packet(self, eio_sid: str, pkt: Any) -> None:
        self.sent.append((eio_sid, pkt.encode()))


async def connected(sio: socketio.AsyncServer, eio_sid: str) -> str:
    manager = sio.manager
    manager.set_server(sio)
    manager.initialize()
    sid: str = await manager.pre_connect(eio_sid, NS)
    await manager.connect(sid, NS)
    return sid


def test_upstream_emit_is_the_one_the_shortcut_reproduces() -> None:
    source = inspect.getsource(socketio.AsyncManager.emit)
    for step in ("_generate_ack_id(sid, callback)", "self.server._send_packet(eio_sid, pkt)",
                 "packet.EVENT, namespace=namespace, data=[event] + data"):  # fmt: skip
        assert step in source, f"AsyncManager.emit no longer does {step!r}: emit_call differs"


async def test_emit_call_sends_what_upstream_emit_sends() -> None:
    sio = Recording()
    sid = await connected(sio, "eio-1")
    acks: list[Any] = []
    payload = {"agent": "a", "req_id": "r1", "params": {"x": [1, 2.5, "é"]}}
    await sio.emit("client:tool_call", payload, to=sid, namespace=NS, callback=acks.append)
    await sio.emit_call("client:tool_call", payload, sid, NS, acks.append)
    (eio_a, upstream), (eio_b, ours) = sio.sent
    assert eio_a == eio_b == "eio-1"
    assert upstream.replace(f"{NS},1[", f"{NS},2[", 1) == ours, (upstream, ours)
    callbacks = sio.manager.callbacks[sid]
    assert callbacks[1] == callbacks[2] == acks.append  # same ids, same registry
    await sio._handle_ack("eio-1", NS, 2, ["answer"])
    assert acks == ["answer"]


async def test_emit_call_to_a_sid_not_here_sends_and_registers_nothing() -> None:
    sio = Recording()
    await connected(sio, "eio-1")
    await sio.emit_call("client:tool_call", {}, "gone", NS, print)
    assert sio.sent == []
    assert "gone" not in sio.manager.callbacks


class Screening(SmcpSocketServer):
    """The real server, recording what its event screen is given."""

    def __init__(self) -> None:
        super().__init__()
        self.screened: list[tuple[Any, str | None]] = []

    async def screen_client_event(
        self, eio_sid: str, namespace: str, id: Any, data: Any, text: str | None = None
    ) -> bool:
        self.screened.append((data, text))
        return False


async def test_the_event_screen_gets_the_text_the_event_was_decoded_from() -> None:
    sio = Screening()
    await connected(sio, "eio-1")
    sio.on("client:tool_call", print, namespace=NS)
    text = '2/smcp,7["client:tool_call",{"req_id":"r"}]'
    await sio._handle_eio_message("eio-1", text)
    assert sio.screened == [(["client:tool_call", {"req_id": "r"}], text)], (
        "upstream no longer decodes an EVENT and dispatches it in one step: the size "
        "screen's text shortcut would see another packet's text"
    )
    assert sio._event_text is None  # nothing left behind for the next packet
