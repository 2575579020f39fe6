"""In-process uvicorn for the single-process benchmarks (a free port comes from the testkit)."""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn

from a2c_testkit.processes import free_port

__all__ = ["free_port", "serve"]


async def serve(app: Any, port: int) -> tuple[uvicorn.Server, asyncio.Task[None]]:
    """Start ``app`` on 127.0.0.1:``port``; returns the server and its task once started."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    return server, task
