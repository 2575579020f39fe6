"""NoiseLog: one WARNING per kind per interval, counting what it left out."""

from __future__ import annotations

import logging

import pytest

from a2c_server._observe._noise import NoiseLog


def test_server_noise_rate_limits_per_kind(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    noise = NoiseLog(logging.getLogger("a2c_server.test_noise"), interval=10, clock=lambda: now[0])
    caplog.set_level(logging.WARNING, "a2c_server.test_noise")
    assert noise.warning("reserved event", "event refused", sid="s1")
    assert not noise.warning("reserved event", "event refused", sid="s2")
    assert not noise.warning("reserved event", "event refused", sid="s3")
    assert noise.warning("undecodable packet", "packet refused")  # another kind: its own budget
    now[0] += 10
    assert noise.warning("reserved event", "event refused", sid="s4")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        'event refused kind="reserved event" sid=s1',
        'packet refused kind="undecodable packet"',
        'event refused kind="reserved event" suppressed=2 sid=s4',
    ]
    assert all(r.levelno == logging.WARNING and r.exc_info is None for r in caplog.records)
