"""Dropping a session at once: its TCP connection aborted, its queue emptied.

A client that stops reading fills the kernel's send buffer, then uvicorn pauses the
WebSocket's writes, so python-engineio's writer waits in ``send`` and never sees the
``None`` that would end it. ``close(abort=True)`` only marks the Engine.IO socket closed:
the TCP connection stayed ESTABLISHED, the reader kept dispatching the client's frames
and the queue (up to ``max_outgoing_bytes``) stayed in memory until the client went away.
ASGI has no message that closes a connection without queueing behind its unsent data, so
:func:`transport_aborter` finds the connection's asyncio transport through the ASGI
``send`` callable the WebSocket was opened with (uvicorn's protocol object: its bound
method's ``__self__.transport``); ``abort()`` is asyncio's public API. Under an ASGI
server without that shape it returns None and the drop falls back to the graceful close.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from a2c_server._floods._outbox import OutputBudget, packet_size

__all__ = ["discard_queue", "transport_aborter"]


def transport_aborter(ws: Any) -> Callable[[], None] | None:
    """``abort`` of the TCP transport under python-engineio's ASGI WebSocket ``ws`` (or None)."""
    send = getattr(ws, "asgi_send", None)  # python-engineio's ASGI WebSocket wrapper
    owner = getattr(send, "__self__", None)  # uvicorn's WebSocket protocol object
    transport = getattr(owner, "transport", None)
    # asyncio's and uvloop's transports alike (uvloop's do not subclass asyncio's).
    abort = getattr(transport, "abort", None)
    if not callable(abort) or not callable(getattr(transport, "is_closing", None)):
        return None
    return abort  # type: ignore[no-any-return]


def discard_queue(queue: asyncio.Queue[Any], budget: OutputBudget | None) -> int:
    """Empty an Engine.IO socket's outgoing queue; the bytes it held (released from ``budget``)."""
    freed = 0
    while not queue.empty():
        pkt = queue.get_nowait()
        queue.task_done()
        freed += packet_size(pkt)
    if budget is not None:
        budget.release(freed)
    return freed
