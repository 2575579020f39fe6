"""Live configuration reload, the trigger: when to re-read the configuration file.

:class:`ConfigReloader` re-reads the file (on SIGHUP, or when ``--watch-config`` sees it
change), validates it completely first (a bad file changes nothing and the log says why)
and hands it to :meth:`ComputerCore.update_config`, which applies the plan
(:func:`plan_reload`) and tells the office once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ._config import load_config, plan_reload
from ._exceptions import ConfigError

if TYPE_CHECKING:
    from ._computer import ComputerCore

__all__ = ["ConfigReloader"]

logger = logging.getLogger("a2c_computer.reload")

_WATCH_INTERVAL: Final = 1.0


class ConfigReloader:
    """Re-reads ``path`` into ``computer`` on demand (SIGHUP) or when it changes (watch)."""

    def __init__(
        self,
        computer: ComputerCore,
        path: str | os.PathLike[str],
        *,
        on_outcome: Callable[[str], None] | None = None,
    ) -> None:
        self._computer = computer
        self._path = Path(path)
        self._on_outcome = on_outcome
        self._lock = asyncio.Lock()
        self._seen = self._digest()
        self._tasks: set[asyncio.Task[None]] = set()

    def _digest(self) -> str | None:
        try:
            return hashlib.sha256(self._path.read_bytes()).hexdigest()
        except OSError:
            return None

    async def reload(self) -> bool:
        """Validate the file, then apply it; False (and nothing changed) when it is bad."""
        async with self._lock:
            self._seen = self._digest()
            try:
                new = await asyncio.to_thread(load_config, self._path)
            except ConfigError as exc:
                logger.error("config reload rejected, nothing changed: %s", exc)
                self._report("rejected")
                return False
            plan = plan_reload(self._computer.config, new)
            logger.info("config reload: %s", plan.summary())
            await self._computer.update_config(new)
            self._report("applied")
            return True

    def _report(self, outcome: str) -> None:
        if self._on_outcome is not None:
            self._on_outcome(outcome)

    def request(self) -> None:
        """Schedule a reload (safe to call from a signal handler run by the loop)."""
        task = asyncio.ensure_future(self._guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guarded(self) -> None:
        try:
            await self.reload()
        except Exception:
            logger.exception("config reload failed")

    async def watch(self, interval: float = _WATCH_INTERVAL) -> None:
        """Reload whenever the file's content changes (polling; runs until cancelled)."""
        while True:
            await asyncio.sleep(interval)
            digest = self._digest()
            if digest is not None and digest != self._seen:
                await self._guarded()

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._tasks, return_exceptions=True)
