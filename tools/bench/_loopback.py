"""Loopback helpers shared by the benchmarks: a free port and an in-process uvicorn."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn

__all__ = ["free_port", "serve"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def serve(app: Any, port: int) -> tuple[uvicorn.Server, asyncio.Task[None]]:
    """Start ``app`` on 127.0.0.1:``port``; returns the server and its task once started."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    return server, task
