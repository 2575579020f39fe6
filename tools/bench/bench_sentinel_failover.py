"""Seconds from ``kill -9`` of the Redis primary (behind Sentinel) to calls answered again.

Run: ``uv run python tools/bench/bench_sentinel_failover.py [--kills 5]`` (needs
``redis-server``; everything is started privately on free loopback ports).

Each round starts a fresh deployment: a primary and a replica, three sentinels (quorum 2,
``--down-after-ms``, default 1000, ``--failover-timeout-ms``, default 3000) and two
``a2c-server --redis redis+sentinel://...`` nodes at their default ``--node-ttl`` (6 s) and
``--registry-timeout``. An Agent on node 1 calls a Computer on node 2 every 0.1 s
(``timeout=3``); the primary is killed with SIGKILL. Per round:

* "promoted": until a sentinel names the replica as the primary;
* "first answered": until the first call that started after the kill was answered;
* "all answered from": the start of the last failed call, after which every call was
  answered (the end of the clients' outage);
* the failed calls, by their answer.

A round ends 10 s after the first answered call (calls must keep succeeding then).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path

from a2c_testkit.call_stream import Probe
from a2c_testkit.redis_sentinel import echo_office, redis_sentinel, sentinel_nodes
from a2c_testkit.triangle import eventually


def _why(exc: BaseException) -> str:
    return type(exc).__name__ + ": " + str(exc)[:60]


async def one_round(
    log_dir: Path, down_after_ms: int, failover_timeout_ms: int
) -> dict[str, float]:
    prefix = f"bench-sent-{uuid.uuid4().hex[:8]}"
    office = f"o-{prefix}"
    with redis_sentinel(down_after_ms=down_after_ms,
                        failover_timeout_ms=failover_timeout_ms) as deployment:  # fmt: skip
        async with AsyncExitStack() as stack:
            n1, n2 = await sentinel_nodes(stack, log_dir, deployment, prefix=prefix)
            _, agent = await echo_office(stack, n2.url, n1.url, office)
            probe = Probe(agent, "box", expect="pong", timeout=3, describe=_why)
            probe.start()
            await eventually(lambda: any(ok for _, ok, _ in probe.calls), timeout=60,
                             what="answered before the kill")  # fmt: skip
            deployment.kill_primary()
            killed = time.monotonic()
            await eventually(lambda: deployment.primary_address() == deployment.replica_port,
                             timeout=120, what="the replica promoted")  # fmt: skip
            promoted = time.monotonic() - killed

            def first_ok() -> float | None:
                later = [t for t, ok, _ in probe.calls if ok and t > killed]
                return min(later) if later else None

            await eventually(lambda: first_ok() is not None, timeout=120, what="answered")
            first = first_ok()
            assert first is not None
            await asyncio.sleep(10)
            await probe.stop()
    after = [(t, ok, why) for t, ok, why in probe.calls if t > killed]
    failed = [(t, why) for t, ok, why in after if not ok]
    last_failed = max((t for t, _ in failed), default=killed)
    reasons = collections.Counter(why.split(":")[0] + ":" + why.split(":")[1][:40]
                                  if ":" in why else why for _, why in failed)  # fmt: skip
    print(f"  failed calls after the kill: {len(failed)} of {len(after)} {dict(reasons)}")
    return {"promoted": promoted, "first answered": first - killed,
            "all answered from": last_failed - killed}  # fmt: skip


async def main(kills: int, down_after_ms: int, failover_timeout_ms: int) -> int:
    log_dir = Path(tempfile.mkdtemp(prefix="bench-sentinel-"))
    rows: list[dict[str, float]] = []
    for n in range(kills):
        row = await one_round(log_dir, down_after_ms, failover_timeout_ms)
        rows.append(row)
        print(f"kill {n + 1:2d}: " + ", ".join(f"{k} {v:5.2f} s" for k, v in row.items()),
              flush=True)  # fmt: skip
    for key in rows[0]:
        values = [r[key] for r in rows]
        print(f"{key}: median {statistics.median(values):.2f} s, max {max(values):.2f} s, "
              f"min {min(values):.2f} s over {len(values)} kills")  # fmt: skip
    print(f"(logs in {log_dir})")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--down-after-ms", type=int, default=1000)
    parser.add_argument("--failover-timeout-ms", type=int, default=3000)
    options = parser.parse_args()
    sys.exit(asyncio.run(main(options.kills, options.down_after_ms, options.failover_timeout_ms)))
