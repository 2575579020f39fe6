"""A transport dropped for an oversized message is logged at WARNING with who and how big."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack

import pytest

from a2c_protocol import NAMESPACE, Event
from a2c_server import ServerSettings
from a2c_testkit.server import connect_raw, running_server

LIMIT = 20_000


def drop_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "exceeded max_message_bytes" in r.getMessage()
    ]


@pytest.mark.parametrize(
    ("transports", "pad", "how", "size_known"),
    [
        (["polling"], 50_000, "long-polling POST", True),
        (["polling", "websocket"], LIMIT + 200, "WebSocket message", True),
        (["polling", "websocket"], 50_000, "WebSocket", False),
    ],
)
async def test_oversized_message_drop_is_logged(
    caplog: pytest.LogCaptureFixture,
    transports: list[str],
    pad: int,
    how: str,
    size_known: bool,
) -> None:
    caplog.set_level(logging.WARNING, logger="a2c_server")
    async with (
        running_server(ServerSettings(max_message_bytes=LIMIT)) as srv,
        AsyncExitStack() as stack,
    ):
        client = await stack.enter_async_context(connect_raw(srv, "agent", transports=transports))
        assert await client.join("agent", "big-agent", "o1") == (True, None)
        if "websocket" in transports:
            for _ in range(200):
                if client.sio.transport() == "websocket":
                    break
                await asyncio.sleep(0.05)
            assert client.sio.transport() == "websocket"
        gone = asyncio.Event()
        client.sio.on("disconnect", lambda *a: gone.set(), namespace=NAMESPACE)
        await client.emit(Event.GET_TOOLS, {"agent": "big-agent", "pad": "x" * pad})
        await asyncio.wait_for(gone.wait(), 30)
    warnings = drop_warnings(caplog)
    assert len(warnings) == 1, warnings
    text = warnings[0]
    assert how in text and "role=agent" in text and "name=big-agent" in text
    assert f"limit={LIMIT}" in text
    if size_known:
        assert "size=" in text and "not reported" not in text
    else:
        assert "not reported by the WebSocket layer" in text
