"""The Computer's log: one line per tool call, MCP log notifications, quiet httpx."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from a2c_computer import Computer
from a2c_computer._observe._logging import configure_logging


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    chatty = {name: logging.getLogger(name).level for name in ("httpx", "httpcore")}
    yield
    root.setLevel(saved[0])
    root.handlers[:] = saved[1]
    for name, level in chatty.items():
        logging.getLogger(name).setLevel(level)


async def test_one_info_line_per_tool_call(caplog: pytest.LogCaptureFixture, servers: Any) -> None:
    config = {"servers": {"desk": servers.desk()}}
    caplog.set_level(logging.INFO, logger="a2c_computer.calls")
    async with Computer(config, name="box") as computer:
        await computer.call_tool("echo", {"text": "hi"}, agent="planner", req_id="r-1")
        await computer.call_tool("fail", {}, agent="planner", req_id="r-2")
        await computer.call_tool("nope", {}, agent="planner", req_id="r-3")
    calls = [r for r in caplog.records if r.name == "a2c_computer.calls"]
    assert [r.levelno for r in calls] == [logging.INFO] * 3
    fields = [r.__dict__["a2c"] for r in calls]
    assert [(f["tool"], f["mcp_server"], f["outcome"]) for f in fields] == [
        ("echo", "desk", "ok"),
        ("fail", "desk", "error 4003"),
        ("nope", "-", "error 4001"),
    ]
    assert all(f["agent"] == "planner" and f["duration_s"] >= 0 for f in fields)
    assert "echo on desk by planner: ok in" in calls[0].getMessage()


@pytest.mark.parametrize(
    ("mcp_level", "level"),
    [
        ("warning", logging.WARNING),
        ("notice", logging.INFO),
        ("emergency", logging.CRITICAL),
        ("debug", logging.DEBUG),
    ],
)
async def test_mcp_log_notifications_reach_the_log_at_their_level(
    caplog: pytest.LogCaptureFixture, servers: Any, mcp_level: str, level: int
) -> None:
    config = {"servers": {"desk": servers.desk()}}
    caplog.set_level(logging.DEBUG, logger="a2c_computer.mcp_log")
    async with Computer(config, name="box") as computer:
        result = await computer.call_tool("log", {"level": mcp_level, "data": "disk at 91%"})
        assert not result.is_error
    forwarded = [r for r in caplog.records if r.name == "a2c_computer.mcp_log.desk"]
    assert [(r.levelno, r.getMessage()) for r in forwarded] == [(level, "[desk] disk at 91%")]


def test_httpx2_request_lines_only_with_verbose(restore_logging: None) -> None:
    configure_logging(logging.INFO, verbose=False)
    assert not logging.getLogger("httpx2").isEnabledFor(logging.INFO)
    assert logging.getLogger("httpx2").isEnabledFor(logging.WARNING)
    configure_logging(logging.DEBUG, verbose=True)
    assert logging.getLogger("httpx2").isEnabledFor(logging.INFO)


async def test_an_embedding_app_masks_resolved_inputs_with_the_public_filter(
    caplog: pytest.LogCaptureFixture, servers: Any
) -> None:
    import a2c_computer

    secret = "embed-9d41c7a2e0"
    inputs = [{"id": "k", "type": "promptString", "description": "key", "password": True}]
    entry = servers.desk()
    entry["server_parameters"]["env"] = {"DESK_KEY": "${input:k}"}
    caplog.handler.addFilter(a2c_computer.redacting_filter())
    try:
        config = {"inputs": inputs, "servers": {"desk": entry}}
        async with Computer(config, name="box", env={"A2C_SMCP_K": secret}):
            logging.getLogger("some.library").warning("connecting with key=%s", secret)
    finally:
        caplog.handler.removeFilter(a2c_computer.redacting_filter())
    assert "connecting with key=[redacted]" in caplog.text and secret not in caplog.text
