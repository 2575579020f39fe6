"""Cheap refusals: a connect the auth object alone refuses builds no session.

A missing or wrong shared token is refused before python-socketio builds a Socket.IO
session and runs the connect handler (the namespace's admission never runs for it); the
client sees the same flat 401 ``connect_error`` as before, the refusal is counted and its
folded WARNING written. A bad ``auth.role`` keeps its own 400 (its check comes first).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from a2c_server import ServerSettings
from a2c_server._relay._namespace import SmcpNamespace
from a2c_testkit.server import connect_raw, connect_refusal, running_server

SECRET = "s3cr3t-token-for-early-refusals"


@pytest.mark.parametrize("transports", [["polling"], ["websocket"]])
async def test_floods_a_wrong_token_is_refused_before_admission(
    transports: list[str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="a2c_server")
    admitted: list[str] = []
    admit = SmcpNamespace._admit

    async def counting(self: SmcpNamespace, sid: str, environ: Any, auth: Any) -> None:
        admitted.append(sid)
        await admit(self, sid, environ, auth)

    monkeypatch.setattr(SmcpNamespace, "_admit", counting)
    async with running_server(ServerSettings(auth_token=SECRET)) as srv:
        for auth, message in (
            ({"role": "agent"}, "Authentication failed: auth.token is required"),
            ({"role": "computer", "token": "wrong"}, "Authentication failed: invalid token"),
            ({"token": 123}, "Authentication failed: auth.token is required"),
        ):
            refusal = await connect_refusal(srv, auth, transports)
            # What python-socketio sends for the connect handler's refusal, byte for byte.
            assert refusal == {"message": message, "data": {"code": 401, "message": message}}
        assert admitted == []  # no Socket.IO session, no connect handler for any of them
        bad_role = await connect_refusal(srv, {"role": "boss"}, transports)
        assert bad_role["data"]["code"] == 400 and "auth.role" in bad_role["message"]
        async with connect_raw(srv, "agent", auth={"token": SECRET}) as ok:
            assert ok.sio.connected
        assert len(admitted) == 2  # the bad role and the good token took the full path
        assert srv.app.sio.refusals.counts["unauthorized"] == 3
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("authentication failed" in line for line in warned)
    assert not any(SECRET in line or "wrong" in line for line in warned)
