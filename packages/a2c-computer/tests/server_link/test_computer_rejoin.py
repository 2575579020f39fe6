"""Re-joining while the name is held, and a taken name on the first join,
against the real a2c-server in-process."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from a2c_computer import Computer, ServerRefusedError
from a2c_computer._server_link import _rejoin
from a2c_protocol import NAMESPACE
from a2c_testkit import running_server
from a2c_testkit.server import connect_raw


async def test_a_taken_name_on_the_first_join_logs_only_the_refusal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="a2c_computer")
    async with running_server() as srv, connect_raw(srv, "computer") as holder:
        assert await holder.join("computer", "box", "o1") == (True, None)
        second = Computer({"servers": {}}, name="box", server_url=srv.url, office_id="o1",
                          socketio_path=srv.socketio_path, connect_timeout=10)  # fmt: skip
        with pytest.raises(ServerRefusedError) as refused:
            async with second:
                pass
        assert str(refused.value) == (
            "joining office 'o1' as 'box' was refused: Name 'box' is already taken in office 'o1'"
        )
        await asyncio.sleep(1.0)  # a reconnect, were one started, would show by now
        messages = [r.getMessage() for r in caplog.records]
        assert not [m for m in messages if "disconnected" in m or "reconnect" in m], messages
        assert second.link is None or second.link.connections == 0


async def test_reconnect_waits_out_a_held_name_and_never_gives_up(
    caplog: pytest.LogCaptureFixture, wait: Any
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_computer.link")
    gate = asyncio.Event()
    gate.set()

    async def auth_hook() -> Mapping[str, Any]:
        await gate.wait()  # held while another client takes the name
        return {}

    async with running_server() as srv:
        computer = Computer({"servers": {}}, name="box", server_url=srv.url, office_id="o1",
                            socketio_path=srv.socketio_path, auth_hook=auth_hook)  # fmt: skip
        async with computer:
            link = computer.link
            assert link is not None and link.joined
            gate.clear()
            sid = link._sio.get_sid(NAMESPACE)  # type: ignore[union-attr]
            await srv.app.sio.disconnect(sid, namespace=NAMESPACE)  # the Server drops it
            await wait(lambda: not link.joined, 30, "the link to notice the loss")
            async with connect_raw(srv, "computer") as other:
                # Somebody else took the name meanwhile (no reclaim secret: not ours).
                assert await other.join("computer", "box", "o1") == (True, None)
                gate.set()
                refused = "re-join of office o1 refused"
                await wait(lambda: _count(caplog, refused) >= 1, 30, "the first refusal")
                await asyncio.sleep(3.5)  # tries at about 0, 1 and 3 s: all refused
                assert link.fatal_error is None and not link.joined
                assert _count(caplog, refused) == 1  # said once, not per attempt
            # The other client left: the name is free, the Computer gets it back.
            await wait(lambda: link.joined, 30, "the re-join once the name is free")
            assert link.fatal_error is None
            assert _count(caplog, "re-joined office o1 as box after") == 1


def test_a_name_held_past_the_budget_is_told_once_and_still_tried(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_computer.link")
    clock = [100.0]
    monkeypatch.setattr(_rejoin.time, "monotonic", lambda: clock[0])
    held = _rejoin.HeldName(budget=60.0)
    delays = []
    for now in (100.0, 101.0, 160.0, 161.0, 300.0):  # past 60 s at 161
        clock[0] = now
        delays.append(held.next_delay("box", "o1", "Name 'box' is already taken"))
    assert delays[0] == 0.0 and all(d > 0 for d in delays[1:])  # never gives up
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == [
        "re-join of office o1 as box still refused after 61 s (Name 'box' is already taken): "
        "another client may hold the name; still trying every few seconds (stop this "
        "Computer, or the other one, if that is meant)"
    ]
    assert _count(caplog, "re-join of office o1 refused") == 1


def _count(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(text in record.getMessage() for record in caplog.records)
