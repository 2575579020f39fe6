"""Handshakes the version gate refuses are logged folded, as other refusals.

A flood of Engine.IO handshakes without an ``a2c_version`` (or with a bad one) is refused
by the gate before any Engine.IO session exists; one WARNING each would fill the disk as
the tokenless flood did. One line per code, transport and address per interval; every
refusal still counted in ``a2c_server_version_refusals_total``. The gate's verdict per
version is cached: a cached refusal must answer the same bytes as the first.
"""

from __future__ import annotations

import logging
import re

import httpx
import pytest

from a2c_protocol import PROTOCOL_VERSION
from a2c_server._edge._gate import check_version_query, first_query_value
from a2c_testkit.server import running_server

REFUSED = re.compile(r'^a2c_server_version_refusals_total\{transport="http"\} (\S+)$', re.M)


async def test_floods_gate_refusals_are_folded_per_address(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="a2c_server")
    async with running_server() as srv, httpx.AsyncClient(timeout=30) as http:
        base = f"{srv.url}/{srv.socketio_path}/?EIO=4&transport=polling"
        for _ in range(40):
            missing = await http.get(base)
            assert missing.status_code == 400
        mismatch = await http.get(f"{base}&a2c_version=9.0.0")
        assert mismatch.status_code == 400 and mismatch.json()["code"] == 4008
        again = await http.get(f"{base}&a2c_version=9.0.0")
        assert again.content == mismatch.content  # the cached verdict, the same bytes
        counted = REFUSED.search((await http.get(f"{srv.url}/metrics")).text)
        assert counted is not None and float(counted.group(1)) == 42
        accepted = await http.get(f"{base}&a2c_version={PROTOCOL_VERSION}")
        assert accepted.status_code == 200
    lines = [r.getMessage() for r in caplog.records if "handshake refused" in r.getMessage()]
    assert len([line for line in lines if "code=400 " in line]) == 1, lines
    assert len([line for line in lines if "code=4008" in line]) == 1, lines


@pytest.mark.parametrize(
    "query",
    ["", "sid", "sid=", "a=1&sid=x&sid=y", "sid=a%20b", "x=1&&sid=+z", "=sid&sid", "s%69d=q"],
)
def test_floods_gate_fast_query_read_matches_parse_qsl(query: str) -> None:
    from urllib.parse import parse_qsl

    expected = next((v for k, v in parse_qsl(query, keep_blank_values=True) if k == "sid"), None)
    assert first_query_value(query, "sid") == expected


def test_floods_gate_long_versions_are_decided_but_not_cached() -> None:
    long = "1" * 5000
    refusal = check_version_query(f"a2c_version={long}", "0.2.3")
    assert refusal is not None and "Invalid a2c_version" in refusal.payload.message
    assert check_version_query(f"a2c_version={PROTOCOL_VERSION}", "0.2.3") is None
