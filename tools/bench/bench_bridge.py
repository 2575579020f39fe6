"""What a tool call through ``a2c-agent mcp`` costs a host, by what the host declared.

Run: ``uv run python tools/bench/bench_bridge.py [--calls 400] [--rounds 6] [--baseline SRC]``.

A real ``a2c-server``, an ``a2c-computer`` hosting the scene test server (``echo``), and the
bridge spawned over stdio by mcp 2's ``ClientSession`` (the handshake era, as most hosts
today), each a process of its own. Each round starts one bridge per kind of host, in turn,
and times ``--calls`` sequential ``tools/call`` of ``echo`` (after 20 unmeasured):

- ``plain``: a host that declared no elicitation and no sampling: the call is relayed as
  before the input extension;
- ``asks``: a host that declared elicitation (forms, URLs) and sampling: every call takes
  input (the Agent declares ``a2c_input``, the Computer is ready to relay a question),
  though ``echo`` never asks.

With ``--baseline SRC`` (a directory holding another build's ``a2c_agent``, e.g. ``git
archive main packages/a2c-agent/src``) a third kind, ``baseline``, runs the ``plain`` host
against that build's bridge (through ``PYTHONPATH``) in the same rounds.

Two figures per kind, each the median round's: microseconds per call end to end (host,
bridge, Server, Computer, MCP server: the machine's load moves it a lot), and the bridge
process's own CPU microseconds per call (from /proc: what the bridge costs, much steadier).
The kinds alternate, so a change in the machine's load hits all.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _benchkit import cpu_seconds, process_tree
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


def _bridge_pid() -> int:
    """The bridge this process spawned over stdio (``a2c-agent ... mcp``)."""
    for pid in process_tree(os.getpid())[1:]:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if argv[-2:] == [b"mcp", b""] and any(b"a2c-agent" in a for a in argv[:2]):
            return pid
    raise RuntimeError("the bridge process was not found")


async def run(
    calls: int, rounds: int, baseline: Path | None
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-bridge-"))
    logs, office = tmp / "logs", f"bench-{uuid.uuid4().hex[:8]}"
    scene = write_scene(tmp / "scene.json", {"name": "scene", "windows": []})
    config = write_config(tmp / "alpha.json", [stdio_scene_entry("scene", scene)])
    kinds = {**KINDS, **({"baseline": {}} if baseline is not None else {})}
    figures: dict[str, list[float]] = {kind: [] for kind in kinds}
    cpu: dict[str, list[float]] = {kind: [] for kind in kinds}
    async with (
        server_process(logs) as server,
        computer_process(logs, config=config, server_url=server.url, office=office,
                         name="alpha") as alpha,
    ):  # fmt: skip
        await alpha.wait_for_log("joined office", timeout=90)
        for _ in range(rounds):
            for kind, callbacks in kinds.items():
                log = logs / f"bridge-{kind}.log"
                # stdio_host hands the bridge this process's environment
                if kind == "baseline":
                    os.environ["PYTHONPATH"] = str(baseline)
                else:
                    os.environ.pop("PYTHONPATH", None)
                async with stdio_host(server.url, office, log, **callbacks) as (session, _):
                    await eventually(lambda: _listed(session), timeout=60, what="echo")
                    for _ in range(20):
                        await session.call_tool("alpha__echo", {"text": "x"})
                    pid = _bridge_pid()
                    used, start = cpu_seconds(pid), time.perf_counter()
                    for _ in range(calls):
                        await session.call_tool("alpha__echo", {"text": "x"})
                    figures[kind].append((time.perf_counter() - start) / calls * 1e6)
                    cpu[kind].append((cpu_seconds(pid) - used) / calls * 1e6)
    return figures, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--baseline", type=Path, default=None, metavar="SRC")
    args = parser.parse_args()
    figures, cpu = asyncio.run(run(args.calls, args.rounds, args.baseline))
    for title, table in (("end to end", figures), ("bridge CPU", cpu)):
        print(f"{title} (us per call, median round; all rounds)")
        for kind, rounds in table.items():
            shown = ", ".join(f"{r:.0f}" for r in rounds)
            print(f"  {kind:8} {statistics.median(rounds):7.0f}  ({shown})")
        plain = statistics.median(table["plain"])
        print(f"  asks / plain: {statistics.median(table['asks']) / plain:.2f}")
        if "baseline" in table:
            print(f"  plain / baseline: {plain / statistics.median(table['baseline']):.2f}")


if __name__ == "__main__":
    main()
