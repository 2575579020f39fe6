"""Shared fixtures of the a2c-server tests: a real server on an ephemeral port."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from a2c_server import ServerSettings
from a2c_testkit.server import RunningServer, running_server


@pytest.fixture
def settings() -> ServerSettings:
    """Override in a test module to run the server with other settings."""
    return ServerSettings(tool_call_buffer=0.5)


@pytest.fixture
async def server(settings: ServerSettings) -> AsyncIterator[RunningServer]:
    async with running_server(settings) as srv:
        yield srv
