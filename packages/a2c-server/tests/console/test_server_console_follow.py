"""The console stream's options for a follower (``a2c-agent watch --console``):
``history=False`` replays nothing from before, ``calls=True`` adds one ``call`` event
per finished call of the office (names only). The feed itself, on a real event loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from a2c_server._console._feed import ConsoleFeed
from a2c_server._observe._metrics import ServerMetrics


class _Req:
    tool_name = "echo"
    computer = "box"
    agent = "ag"


def _feed() -> ConsoleFeed:
    return ConsoleFeed(registry=None, metrics=ServerMetrics(), node_id="n",  # type: ignore[arg-type]
                       attach=lambda _: None)  # fmt: skip


def _sent(chunks: list[bytes], kind: str) -> list[dict[str, Any]]:
    out = []
    for chunk in chunks:
        head, _, data = chunk.decode().partition("\ndata: ")
        if head == f"event: {kind}":
            out.append(json.loads(data))
    return out


async def _answer() -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "secret result"}], "isError": False}


async def test_a_follower_gets_no_history_and_one_call_event_per_finished_call() -> None:
    feed = _feed()
    async with feed.viewing("o1") as page:  # a console page keeps office events...
        feed.office_event("o1", "notify:enter_office", {"office_id": "o1", "computer": "box"})
        async with (
            feed.viewing("o1", history=False, calls=True) as follower,
            feed.viewing("o2", history=False, calls=True) as elsewhere,
        ):
            assert _sent(follower.take(), "office") == []  # ...a follower is not replayed
            assert await feed.watch_call("client:tool_call", _Req(), "o1", _answer()) == (
                await _answer()
            )
            chunks = follower.take()
            (call,) = _sent(chunks, "call")
            assert (call["office"], call["tool"], call["computer"], call["agent"],
                    call["outcome"]) == ("o1", "echo", "box", "ag", "ok")  # fmt: skip
            assert "secret" not in b"".join(chunks).decode()
            assert _sent(elsewhere.take(), "call") == []  # another office's follower
        seen = page.take()
        assert _sent(seen, "call") == []  # the pages read calls from the state documents
        assert [e["computer"] for e in _sent(seen, "office")] == ["box"]
    async with feed.viewing("o1") as late_page:
        assert [e["computer"] for e in _sent(late_page.take(), "office")] == ["box"]
    await asyncio.sleep(0)
