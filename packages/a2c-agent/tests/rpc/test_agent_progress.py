"""The Agent's progress registry without a Server: routing, timeout restarts, failures."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from a2c_agent import ToolCallProgress
from a2c_agent._rpc._progress import ProgressWaits


def _wire(progress: float, computer: str = "box", req_id: str = "r1") -> dict[str, Any]:
    return {"agent": "a", "req_id": req_id, "computer": computer, "progress": progress}


async def test_reports_restart_the_timeout_only_when_asked_and_late_ones_do_no_harm() -> None:
    spawned: list[Awaitable[Any]] = []
    waits = ProgressWaits(spawned.append)
    seen: list[ToolCallProgress] = []
    loop = asyncio.get_running_loop()
    with waits.waiting("r1", "box", seen.append, True, 5.0) as bind:
        async with asyncio.timeout(0.5) as scope:
            bind(scope)
            waits.on_notify(_wire(1))
            when = scope.when()
            assert when is not None and when > loop.time() + 4  # restarted to 5 s
            waits.on_notify(_wire(2, computer="intruder"))  # not this call's Computer
            waits.on_notify(_wire(3, req_id="other"))  # not a call of ours
            waits.on_notify({"junk": True})  # malformed
            await asyncio.sleep(0)
        waits.on_notify(_wire(4))  # the scope has exited: no RuntimeError, still delivered
    waits.on_notify(_wire(5))  # the call is over: ignored
    assert [r.progress for r in seen] == [1, 4]


async def test_without_the_reset_the_timeout_stays_and_callback_failures_stay_inside() -> None:
    waits = ProgressWaits(lambda awaitable: asyncio.ensure_future(awaitable))

    def boom(report: ToolCallProgress) -> None:
        raise RuntimeError("callback bug")

    loop = asyncio.get_running_loop()
    with waits.waiting("r1", "box", boom, False, 5.0) as bind:
        async with asyncio.timeout(10) as scope:
            bind(scope)
            before = scope.when()
            waits.on_notify(_wire(1))  # logged, not raised
            assert scope.when() == before
            assert before is not None and before > loop.time()
            await asyncio.sleep(0)
