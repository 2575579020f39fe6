"""Fixtures for the Computer's tests: real MCP servers from a2c_testkit.mcp_servers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from a2c_protocol import Event
from a2c_testkit.mcp_servers import stdio_server_config


class Recorder:
    """Collects ``server:update_*`` announcements of a Computer."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._changed = asyncio.Event()

    async def __call__(self, event: Event) -> None:
        self.events.append(event)
        self._changed.set()

    def count(self, event: Event) -> int:
        return self.events.count(event)

    async def wait_count(self, event: Event, n: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.count(event) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"expected {n} x {event}, saw {self.events}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass


async def wait_until(
    predicate: Callable[[], bool], timeout: float = 30.0, what: str = "condition"
) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def desk(name: str = "desk", *args: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("default_tool_meta", {"auto_apply": True})
    return stdio_server_config(name, "desk", *args, **fields)


def plain(name: str = "plain", **fields: Any) -> dict[str, Any]:
    fields.setdefault("default_tool_meta", {"auto_apply": True})
    return stdio_server_config(name, "plain", **fields)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def wait() -> Callable[..., Any]:
    """``await wait(predicate, timeout=30, what=...)``."""
    return wait_until


@pytest.fixture
def servers() -> Any:
    """Config-entry builders: ``servers.desk(name, *args, **fields)``, ``servers.plain(...)``."""

    class _Builders:
        desk = staticmethod(desk)
        plain = staticmethod(plain)

    return _Builders


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Computers spool blobs under the user's cache dir: keep tests out of the real one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
