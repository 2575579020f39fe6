"""``a2c-agent watch --console --json`` as a real process, its stdout read line by line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

from .processes import bin_path

__all__ = ["Watcher", "watching"]


class Watcher:
    """``a2c-agent ... watch --console --json`` with its stdout read line by line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        """Start reading ``process``'s stdout (JSON lines) and stderr."""
        self.process = process
        self.lines: list[dict[str, Any]] = []
        self.err = ""
        self._readers = [asyncio.ensure_future(self._out()), asyncio.ensure_future(self._err())]

    async def _out(self) -> None:
        assert self.process.stdout is not None
        async for line in self.process.stdout:
            self.lines.append(json.loads(line))

    async def _err(self) -> None:
        assert self.process.stderr is not None
        async for line in self.process.stderr:
            self.err += line.decode()

    def events(self) -> list[str]:
        return [line["event"] for line in self.lines]

    async def stop(self) -> int:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGINT)
        code = await asyncio.wait_for(self.process.wait(), 60)
        await asyncio.gather(*self._readers)
        return code


@contextlib.asynccontextmanager
async def watching(url: str, office: str, *args: str, **env: str) -> AsyncIterator[Watcher]:
    """``a2c-agent --server URL --office OFFICE --json watch --console ARGS``, stopped at exit."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("A2C_")}
    process = await asyncio.create_subprocess_exec(
        bin_path("a2c-agent"), "--server", url, "--office", office, "--json", "watch",
        "--console", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL, env={**base, **env},
    )  # fmt: skip
    watcher = Watcher(process)
    try:
        yield watcher
    finally:
        await watcher.stop()
