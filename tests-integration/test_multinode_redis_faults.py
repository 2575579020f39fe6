"""Redis faults under calls: a hung Redis, a Redis restart under a stream.

Two ``a2c-server --redis`` processes on one private redis-server; the Agent (library,
in-process, default settings) talks to node A, a real ``a2c-computer run`` to node B, so
every call crosses nodes. The tool appends each run's id to a file, which is the truth
the outcomes are checked against: a call that ran must never look like one that did not.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent, RemoteError, ToolCallTimeoutError, result_text
from a2c_testkit.call_stream import CallStream
from a2c_testkit.redis_server import RedisServer, redis_server
from a2c_testkit.triangle import (
    ServerProcess,
    computer_process,
    eventually,
    redis_node_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)

NODE_TTL = 2.0
PREFIX = "faults"


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        try:
            yield server
        finally:
            server.resume()  # a test that failed while Redis was paused


@contextlib.asynccontextmanager
async def agent_on_a_box_on_b(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> AsyncIterator[tuple[ServerProcess, ServerProcess, AsyncAgent]]:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": []})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    office = f"office-{uuid.uuid4()}"
    async with (
        redis_node_process(procs.log_dir, redis.url, "A", prefix=PREFIX, node_ttl=NODE_TTL,
                           track=procs.track) as a,
        redis_node_process(procs.log_dir, redis.url, "B", prefix=PREFIX, node_ttl=NODE_TTL,
                           track=procs.track) as b,
        # Default settings (the contract's case), but refusals answered as they come: these
        # tests read the Server's answers, which the SDK would otherwise wait out.
        AsyncAgent(a.url, name="planner", resend_unsent=False) as agent,
    ):  # fmt: skip
        await agent.join_office(office)
        async with computer_process(procs.log_dir, config=config, office=office, name="box",
                                    server_url=b.url, track=procs.track):  # fmt: skip
            await eventually(lambda: "box" in agent.tools, what="box joined")
            yield a, b, agent


async def test_a_hung_redis_answers_each_call_503_within_a_second(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> None:
    async with agent_on_a_box_on_b(procs, tmp_path, redis) as (_, _, agent):
        runs = tmp_path / "runs.log"
        ok = await agent.call_tool("box", "slow", {"seconds": 0, "runs": str(runs), "id": "0"})
        assert result_text(ok) == "slept"
        redis.pause()
        waits: list[float] = []
        answers: list[RemoteError] = []
        try:
            for n in range(1, 6):
                started = time.monotonic()
                with pytest.raises(RemoteError) as info:
                    await agent.call_tool(
                        "box", "slow", {"seconds": 0, "runs": str(runs), "id": str(n)}
                    )
                waits.append(time.monotonic() - started)
                answers.append(info.value)
        finally:
            redis.resume()
        print(f"answers with Redis paused, seconds: {[round(w, 2) for w in waits]}")
        # Bound with room for a loaded 2-core host: the default deadline is 0.5 s, and
        # before it each call waited the 5 s socket timeout.
        assert max(waits) < 2.0, waits
        for answer in answers:
            assert answer.code == 503, answer
            # Not sent: trying again is safe, and it did not run.
            assert (answer.details or {}).get("delivered") is False, answer
        assert runs.read_text().split() == ["0"]


async def test_redis_restart_under_a_stream_of_calls_never_hides_a_run(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> None:
    """No routing on a recovering registry, and no run hidden behind a retry, with default SDK
    settings (timeout 5 s)."""
    runs = tmp_path / "runs.log"
    runs.touch()

    async with agent_on_a_box_on_b(procs, tmp_path, redis) as (_, _, agent):
        calls = CallStream(agent, runs, seconds=0.4, timeout=5,
                           caught=(RemoteError, ToolCallTimeoutError))  # fmt: skip
        streaming = asyncio.create_task(calls.run())
        await eventually(lambda: len(runs.read_text().split()) >= 10, what="calls running")
        redis.stop()
        await asyncio.sleep(3)  # calls meanwhile: 503 at once, never sent
        redis.start()  # empty, like a restart without persistence
        recovered = time.monotonic()
        # Until the first call after the restart succeeds, and some more after it.
        await eventually(
            lambda: calls.answered_after(recovered),
            timeout=60, what="a call after the restart succeeded",
        )  # fmt: skip
        await asyncio.sleep(3)
        calls.stop()
        await asyncio.wait_for(streaming, 60)

    outcomes, ran = calls.outcomes, calls.ran()
    twice = sorted({i for i in ran if ran.count(i) > 1})
    hidden = sorted(i for i in set(ran) if not outcomes[i].ok and not outcomes[i].may_have_run)
    hung = sorted(
        i for i, o in outcomes.items()
        if o.started >= recovered and o.ended - o.started > 0.4 + 1.0 and not o.ok
    )  # fmt: skip
    first = min(o.started for o in outcomes.values() if o.ok and o.started > recovered)
    print(f"{len(outcomes)} calls, {len(set(ran))} ran, errors {calls.error_kinds()}; first "
          f"call answered after the restart started {first - recovered:.1f} s after it")  # fmt: skip
    assert not twice, f"ran twice: {twice}"
    assert not hidden, {i: repr(outcomes[i].error) for i in hidden}
    # The timeout contract: the Server's answer (which says whether the call may have run)
    # comes before the Agent's own deadline, so no call ends in an SDK-side timeout.
    sdk_timeouts = sorted(
        i for i, o in outcomes.items() if isinstance(o.error, ToolCallTimeoutError)
    )
    assert not sdk_timeouts, f"the Agent gave up before the Server answered: {sdk_timeouts}"
    assert not hung, {i: (outcomes[i].ended - outcomes[i].started, outcomes[i].error) for i in hung}
    assert not [o for o in outcomes.values() if isinstance(o.error, RemoteError)
                and o.error.code == 404], "a Computer that never left was answered 404"  # fmt: skip
