"""The floor of this stack: a bare python-socketio relay, for ``bench_server_cpu.py``.

Run: ``python tools/bench/raw_relay.py PORT``. It does the least a relay can do for one
tool call — a name → sid map filled at connect, one ``call()`` to the named peer, its ack
returned as the answer — under uvicorn with uvloop and httptools. No version gate, no
validation, no offices: whatever ``a2c-server`` adds on top is what the bench measures.
"""

from __future__ import annotations

import sys
from typing import Any

import socketio
import uvicorn

NAMESPACE = "/smcp"

sio = socketio.AsyncServer(async_mode="asgi", logger=False, engineio_logger=False)
names: dict[str, str] = {}


@sio.on("connect", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
async def connect(sid: str, environ: dict[str, Any], auth: dict[str, Any]) -> None:
    names[auth["name"]] = sid


@sio.on("client:tool_call", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
async def tool_call(sid: str, data: dict[str, Any]) -> Any:
    return await sio.call(
        "client:tool_call", data, to=names[data["computer"]], namespace=NAMESPACE, timeout=60
    )


if __name__ == "__main__":
    uvicorn.run(
        socketio.ASGIApp(sio),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        loop="uvloop",
        http="httptools",
    )
