"""What a tool call through ``a2c-agent mcp`` costs a host, by what the host declared.

Run: ``uv run python tools/bench/bench_bridge.py [--calls 400] [--rounds 6]``.

A real ``a2c-server``, an ``a2c-computer`` hosting the scene test server (``echo``), and the
bridge spawned over stdio by mcp 2's ``ClientSession`` (the handshake era, as most hosts
today), each a process of its own. Each round starts one bridge per kind of host, in turn,
and times ``--calls`` sequential ``tools/call`` of ``echo`` (after 20 unmeasured):

- ``plain``: a host that declared no elicitation and no sampling: the call is relayed as
  before the input extension;
- ``asks``: a host that declared elicitation (forms, URLs) and sampling: every call takes
  input (the Agent declares ``a2c_input``, the Computer is ready to relay a question),
  though ``echo`` never asks.

The figure is the median round's microseconds per call, end to end (host, bridge, Server,
Computer, MCP server); the two kinds alternate, so a change in the machine's load hits both.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from mcp import ClientSession, MCPError, types

from a2c_testkit.bridge import stdio_host
from a2c_testkit.triangle import (
    computer_process,
    eventually,
    server_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)


async def _decline(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


async def _no_reply(context: Any, params: Any) -> types.ErrorData:
    return types.ErrorData(code=-1, message="no model here")


KINDS: dict[str, dict[str, Any]] = {
    "plain": {},
    "asks": {"elicitation_callback": _decline, "sampling_callback": _no_reply},
}


async def _listed(session: ClientSession) -> bool:
    try:
        return "alpha__echo" in {t.name for t in (await session.list_tools()).tools}
    except MCPError:
        return False


async def run(calls: int, rounds: int) -> dict[str, list[float]]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-bridge-"))
    logs, office = tmp / "logs", f"bench-{uuid.uuid4().hex[:8]}"
    scene = write_scene(tmp / "scene.json", {"name": "scene", "windows": []})
    config = write_config(tmp / "alpha.json", [stdio_scene_entry("scene", scene)])
    figures: dict[str, list[float]] = {kind: [] for kind in KINDS}
    async with (
        server_process(logs) as server,
        computer_process(logs, config=config, server_url=server.url, office=office,
                         name="alpha") as alpha,
    ):  # fmt: skip
        await alpha.wait_for_log("joined office", timeout=90)
        for _ in range(rounds):
            for kind, callbacks in KINDS.items():
                log = logs / f"bridge-{kind}.log"
                async with stdio_host(server.url, office, log, **callbacks) as (session, _):
                    await eventually(lambda: _listed(session), timeout=60, what="echo")
                    for _ in range(20):
                        await session.call_tool("alpha__echo", {"text": "x"})
                    start = time.perf_counter()
                    for _ in range(calls):
                        await session.call_tool("alpha__echo", {"text": "x"})
                    figures[kind].append((time.perf_counter() - start) / calls * 1e6)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    figures = asyncio.run(run(args.calls, args.rounds))
    for kind, rounds in figures.items():
        shown = ", ".join(f"{r:.0f}" for r in rounds)
        print(f"{kind:6} median {statistics.median(rounds):7.0f} us/call  (rounds: {shown})")
    ratio = statistics.median(figures["asks"]) / statistics.median(figures["plain"])
    print(f"asks / plain: {ratio:.2f}")


if __name__ == "__main__":
    main()
