"""The join deadline does not cut a session whose joins fail on the Server's side: a
Computer retrying through a Redis outage keeps its session (a real redis-server, paused)."""

from __future__ import annotations

import asyncio

from a2c_server import ServerSettings
from a2c_testkit.redis_server import redis_server
from a2c_testkit.server import connect_raw, running_nodes
from a2c_testkit.triangle import eventually

TIMEOUT = 1.5


async def test_joins_refused_for_an_unavailable_registry_restart_the_deadline() -> None:
    settings = ServerSettings(join_timeout=TIMEOUT, registry_timeout=0.3)
    with redis_server() as redis:
        async with (
            running_nodes(redis.url, settings, count=1) as srv,
            connect_raw(srv, "computer") as box,
        ):
            loop = asyncio.get_running_loop()
            start = loop.time()
            redis.pause()
            try:
                answers = []
                # Keep trying past twice the deadline, as a Computer's re-join does.
                while loop.time() - start < 2.5 * TIMEOUT:
                    answers.append(await box.join("computer", "box", "o1"))
                    assert box.sio.connected, "cut while the registry was the one failing"
            finally:
                redis.resume()
            assert answers and all(a[0] is False for a in answers), answers  # type: ignore[index]
            assert "Registry unavailable" in str(answers[0])
            await eventually(lambda: _joined(box), timeout=30, what="the join once Redis is back")
            assert srv.app.sio.refusals.counts.get("join_deadline", 0) == 0


async def _joined(box: object) -> bool:
    answer = await box.join("computer", "box", "o1")  # type: ignore[attr-defined]
    return answer == (True, None)
