"""The protocol line a Computer joins with is logged once at INFO, the default 0.2 too."""

from __future__ import annotations

import logging

import pytest

from a2c_computer import Computer
from a2c_testkit import running_server


async def test_default_line_is_logged_once_at_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="a2c_computer")
    async with (
        running_server() as srv,
        Computer(
            {"servers": {}},
            name="box",
            server_url=srv.url,
            office_id="o1",
            socketio_path=srv.socketio_path,
        ),
    ):
        pass
    lines = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and "(protocol " in r.getMessage()
    ]
    assert lines == ["joined office o1 as box (protocol 0.2.3)"]
