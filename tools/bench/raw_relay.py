"""The floor of this stack: a bare python-socketio relay, for ``bench_server_cpu.py``.

Run: ``python tools/bench/raw_relay.py PORT``. It does the least a relay can do for one
tool call — a name → sid map filled at connect, one ``call()`` to the named peer, its ack
returned as the answer — under uvicorn with uvloop and httptools. No version gate, no
validation, no offices: whatever ``a2c-server`` adds on top is what the bench measures.
``bench_stack.py`` serves the same relay (:func:`relay`) under other servers.
"""

from __future__ import annotations

import sys
from typing import Any

import socketio
import uvicorn

NAMESPACE = "/smcp"


def relay(async_mode: str = "asgi") -> socketio.AsyncServer:
    """The bare relay on a python-socketio server of ``async_mode`` ("asgi", "aiohttp")."""
    sio = socketio.AsyncServer(async_mode=async_mode, logger=False, engineio_logger=False)
    names: dict[str, str] = {}

    @sio.on("connect", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
    async def connect(sid: str, environ: dict[str, Any], auth: dict[str, Any]) -> None:
        names[auth["name"]] = sid

    @sio.on("client:tool_call", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
    async def tool_call(sid: str, data: dict[str, Any]) -> Any:
        return await sio.call(
            "client:tool_call", data, to=names[data["computer"]], namespace=NAMESPACE, timeout=60
        )

    return sio


#: The ASGI app of the relay (what ``granian`` serves in ``bench_stack.py``).
app = socketio.ASGIApp(relay())

if __name__ == "__main__":
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        loop="uvloop",
        http="httptools",
    )
