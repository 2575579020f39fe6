"""The registry behind Redis Sentinel survives ``kill -9`` of its primary.

Real processes: a primary, a replica and three sentinels (``redis-server``, quorum 2,
``down-after-milliseconds 1000``), two ``a2c-server --redis redis+sentinel://...`` nodes.
An Agent on one node calls a Computer on the other every 0.1 s; the primary is killed
with SIGKILL. Calls succeed again once a sentinel has promoted the replica, nobody leaves
its office, and what asynchronous replication lost (emulated: the replica is rolled back
to before an Agent's join, so the promoted registry has never heard of its seat) is put
back by the node hosting that Agent, so nobody else can take the seat.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent, JoinOfficeError
from a2c_protocol import A2CError, Event
from a2c_testkit.call_stream import Probe
from a2c_testkit.redis_sentinel import (
    SentinelDeployment,
    echo_office,
    redis_command,
    redis_sentinel,
    sentinel_nodes,
)
from a2c_testkit.triangle import eventually

#: The bounds: every call from 15 s after the kill answered (or from whenever the test
#: has checked the lost seat, if later), the first one within 30 s (10 s is the goal: a
#: loaded 2-core host gets more; the real figure, about 2.3 s, is measured by
#: tools/bench/bench_sentinel_failover.py).
BACK_WITHIN = 30.0
ALL_GOOD_FROM = 15.0


def _snapshot(port: int, prefix: str) -> dict[bytes, tuple[bytes, int]]:
    keys = redis_command(port, "KEYS", "{" + prefix + "}*")
    assert isinstance(keys, list)
    out: dict[bytes, tuple[bytes, int]] = {}
    for key in keys:
        dump, ttl = redis_command(port, "DUMP", key), redis_command(port, "PTTL", key)
        if isinstance(dump, bytes) and isinstance(ttl, int):
            out[key] = (dump, max(ttl, 0))
    return out


def _roll_back(port: int, prefix: str, snapshot: dict[bytes, tuple[bytes, int]]) -> None:
    """The replica's registry as it was at ``snapshot``: what replication lost."""
    assert redis_command(port, "CONFIG", "SET", "replica-read-only", "no") == "OK"
    keys = redis_command(port, "KEYS", "{" + prefix + "}*")
    assert isinstance(keys, list)
    for key in keys:
        if key not in snapshot:
            redis_command(port, "DEL", key)
    for key, (dump, ttl) in snapshot.items():
        answer = redis_command(port, "RESTORE", key, ttl, dump, "REPLACE")
        assert answer == "OK", answer


def _seat(deployment: SentinelDeployment, prefix: str, office: str) -> Any:
    port = deployment.primary_address()
    if port is None:
        return None
    try:
        return redis_command(port, "GET", "{" + prefix + "}:agent:" + office)
    except OSError:
        return None


# 3 s: n1's heartbeat key runs out during the promotion while n1 is paused, and n2 reaches
# the new primary first (no node may reap another for that); 10 s: no key runs out, and
# only the write sequence tells n1 its seat was lost.
@pytest.mark.parametrize("node_ttl", [3.0, 10.0])
async def test_kill_9_of_the_primary_keeps_offices_and_calls_and_restores_lost_seats(
    tmp_path: Path, node_ttl: float
) -> None:
    prefix = f"sent-{uuid.uuid4().hex[:8]}"
    office, lost_office = f"o-{prefix}", f"lost-{prefix}"
    with redis_sentinel(down_after_ms=1000, failover_timeout_ms=3000) as deployment:
        async with AsyncExitStack() as stack:
            n1, n2 = await sentinel_nodes(stack, tmp_path, deployment, prefix=prefix,
                                          node_ttl=node_ttl)  # fmt: skip
            box, planner = await echo_office(stack, n2.url, n1.url, office)
            probe = Probe(planner, "box", expect="pong", timeout=3)
            probe.start()
            await eventually(lambda: probe.first_ok_after(0.0) is not None, timeout=60,
                             what="the Agent's calls answered before the kill")  # fmt: skip

            # The seat of 'late' reaches the replica, which then forgets it: as if the
            # primary died before replicating the join.
            before = _snapshot(deployment.replica_port, prefix)
            late = await stack.enter_async_context(AsyncAgent(n1.url, name="late"))
            await late.join_office(lost_office)
            key = "{" + prefix + "}:agent:" + lost_office
            await eventually(
                lambda: redis_command(deployment.replica_port, "GET", key) is not None,
                timeout=30, what="the seat replicated",
            )  # fmt: skip
            _roll_back(deployment.replica_port, prefix, before)
            assert redis_command(deployment.replica_port, "GET", key) is None

            # n1 is slow to reach the promoted primary (paused from the kill until a second
            # after the promotion): n2 gets there first and must not reap it meanwhile.
            os.kill(n1.process.pid, signal.SIGSTOP)
            try:
                deployment.kill_primary()
                killed = time.monotonic()
                await eventually(
                    lambda: deployment.primary_address() == deployment.replica_port,
                    timeout=60, what="a sentinel promoted the replica",
                )  # fmt: skip
                promoted = time.monotonic() - killed
                await asyncio.sleep(1.0)
            finally:
                os.kill(n1.process.pid, signal.SIGCONT)
            await eventually(lambda: probe.first_ok_after(killed) is not None,
                             timeout=BACK_WITHIN, what="a call answered after the kill")  # fmt: skip
            back = probe.first_ok_after(killed)
            # The seat the promoted registry never saw is put back by the node hosting it.
            await eventually(lambda: _seat(deployment, prefix, lost_office) is not None,
                             timeout=30, what="the lost seat put back")  # fmt: skip
            rival = await stack.enter_async_context(AsyncAgent(n2.url, name="rival"))
            with pytest.raises(JoinOfficeError, match="already has an agent"):
                await rival.join_office(lost_office)
            # The registry is writable on the promoted replica, and calls keep succeeding.
            assert redis_command(deployment.replica_port, "SET", "{" + prefix + "}:w", "1") == "OK"
            settled = max(killed + ALL_GOOD_FROM, time.monotonic())
            await eventually(lambda: probe.first_ok_after(settled + 2.0) is not None,
                             timeout=60, what="calls after the settle point")  # fmt: skip
            await probe.stop()
            print(f"sentinel failover: replica promoted {promoted:.1f} s, first answered "
                  f"call {back:.1f} s after kill -9 of the primary")  # fmt: skip
            failed_late = [(t - killed, why) for t, ok, why in probe.calls
                           if t >= settled and not ok]  # fmt: skip
            assert not failed_late, failed_late
            # Nobody left its office: no leave notice reached the Computer, both still in.
            left = [n for n in box.notifications if n.event is Event.NOTIFY_LEAVE_OFFICE]
            assert not left, left
            assert box.sio.connected and planner.office_id == office
            assert late.office_id == lost_office


async def test_a_demoted_primary_sends_the_nodes_to_the_promoted_one(tmp_path: Path) -> None:
    """``SENTINEL FAILOVER``: the old primary lives on as a replica (READONLY to writes);
    the nodes ask the sentinels again and write to the new primary, nothing gets stuck."""
    prefix = f"demote-{uuid.uuid4().hex[:8]}"
    office = f"o-{prefix}"
    with redis_sentinel(down_after_ms=1000, failover_timeout_ms=3000) as deployment:
        async with AsyncExitStack() as stack:
            n1, n2 = await sentinel_nodes(stack, tmp_path, deployment, prefix=prefix,
                                          node_ttl=6.0)  # fmt: skip
            box, planner = await echo_office(stack, n2.url, n1.url, office)
            probe = Probe(planner, "box", expect="pong", timeout=3)
            probe.start()
            await eventually(lambda: probe.first_ok_after(0.0) is not None, timeout=60,
                             what="calls answered before the failover")  # fmt: skip
            sentinel = deployment.sentinels[0].port
            assert redis_command(sentinel, "SENTINEL", "FAILOVER", "a2c-primary") == "OK"
            started = time.monotonic()
            await eventually(lambda: deployment.primary_address() == deployment.replica_port,
                             timeout=60, what="the replica promoted")  # fmt: skip

            def demoted() -> bool:
                role = redis_command(deployment.primary_port, "ROLE")
                return isinstance(role, list) and role[0] == b"slave"

            await eventually(demoted, timeout=60, what="the old primary demoted")
            # Registry writes (a join and a leave) land on the new primary.
            later = await stack.enter_async_context(AsyncAgent(n2.url, name="later"))
            await eventually(lambda: _joins(later, f"later-{prefix}"), timeout=30,
                             what="a join after the demotion")  # fmt: skip
            key = "{" + prefix + "}:agent:later-" + prefix
            assert redis_command(deployment.replica_port, "GET", key) is not None
            settled = time.monotonic()
            await eventually(lambda: probe.first_ok_after(settled + 2.0) is not None,
                             timeout=60, what="calls after the demotion")  # fmt: skip
            await probe.stop()
            failed = [(t - started, why) for t, ok, why in probe.calls if t >= settled and not ok]
            assert not failed, failed
            left = [n for n in box.notifications if n.event is Event.NOTIFY_LEAVE_OFFICE]
            assert not left, left


async def _joins(agent: AsyncAgent, office: str) -> bool:
    try:
        await agent.join_office(office)
    except (A2CError, OSError):
        return False
    return True
