"""The turn rule for unadmitted sessions' requests (issue 41): a few per loop turn, in order.

A connect flood's requests must not fill a loop turn ahead of admitted clients' frames:
at most ``per_turn`` start per turn, the rest wait in arrival order, and a waiter that
goes away (cancelled) neither blocks nor uses a place.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from a2c_server._floods._turns import Turns

pytestmark = pytest.mark.asyncio


class LoopTurns:
    """Counts event-loop turns: a callback that puts itself back at each turn."""

    def __init__(self) -> None:
        self.count = 0
        self._stopped = False
        asyncio.get_running_loop().call_soon(self._tick)

    def _tick(self) -> None:
        if not self._stopped:
            self.count += 1
            asyncio.get_running_loop().call_soon(self._tick)

    def stop(self) -> None:
        self._stopped = True


async def test_floods_turns_start_a_few_per_loop_turn_in_order() -> None:
    turns = Turns(per_turn=2)
    ticks = LoopTurns()
    started: list[tuple[int, int]] = []

    async def request(n: int) -> None:
        await turns.turn()
        started.append((n, ticks.count))

    await asyncio.wait_for(asyncio.gather(*(request(n) for n in range(12))), 30)
    ticks.stop()
    assert [n for n, _ in started] == list(range(12))  # first come, first served
    per_tick: dict[int, int] = {}
    for _, tick in started:
        per_tick[tick] = per_tick.get(tick, 0) + 1
    assert max(per_tick.values()) <= 2, per_tick
    assert len(per_tick) >= 6
    assert turns.waited == 10 and turns.queued == 0


async def test_floods_turns_a_cancelled_waiter_does_not_hold_the_queue() -> None:
    turns = Turns(per_turn=1)
    first, gone, later = (asyncio.create_task(turns.turn()) for _ in range(3))
    await asyncio.sleep(0)  # in one turn: the first takes the place, the two others wait
    assert first.done() and turns.queued == 2
    gone.cancel()  # the client went away before its turn
    with contextlib.suppress(asyncio.CancelledError):
        await gone
    await asyncio.wait_for(later, 10)
    assert turns.queued == 0


async def test_floods_turns_a_lone_request_never_waits() -> None:
    turns = Turns()
    for _ in range(5):
        await turns.turn()
        await asyncio.sleep(0.01)  # later turns: the place is back
    assert turns.waited == 0
