"""Server CPU per relayed ``client:tool_call`` under each serving stack, side by side.

Run: ``uv run python tools/bench/bench_stack.py [--calls 2000] [--rounds 3]
[--stacks uvicorn,aiohttp,...] [--a2c uvicorn,granian,...] [--core uvicorn,aiohttp]``.

The same bare python-socketio relay (``raw_relay.py``) is served by every stack in
``--stacks``; with ``--a2c``, ``a2c-server`` (at its default log level) is served by each
stack named there as well. All the servers run at once and the load visits them in turn,
``--batch`` calls at a time, so the machine's other work falls on every stack alike. The
figure is the server's own CPU (``/proc``, user + system, summed over its worker processes)
per call; the table shows each stack's median ratio over the rounds to the first stack of
its kind (the relay under ``uvicorn``, ``a2c-server`` under ``uvicorn``: today's default).
The load side is the one of ``bench_server_cpu.py`` (SDK-free clients, Computers in their
own process), at the same four configurations (in flight x offices).

Stacks (``granian`` only when it is installed: ``uv pip install granian``; it is not a
dependency of the workspace):

* ``uvicorn``: uvloop, httptools, ``ws="auto"`` (websockets-sansio), what ``a2c-server``
  runs; ``uvicorn-websockets`` / ``uvicorn-wsproto``: the other WebSocket protocols;
  ``uvicorn-asyncio``: the stock asyncio loop.
* ``aiohttp`` / ``aiohttp-asyncio``: python-socketio's aiohttp mode (``async_mode="aiohttp"``)
  on an aiohttp web app, with uvloop or asyncio (relay only: ``a2c-server`` is an ASGI app).
* ``granian``: the ASGI app under granian (one worker, uvloop).

``--core`` serves ``a2c-server``'s own Socket.IO server (namespace, fence, codec) without
its ASGI edge under uvicorn and under aiohttp: the only way to see what the aiohttp stack
would save ``a2c-server`` without porting the edge (see :func:`serve_core`).

A stack whose clients cannot connect, or never upgrade to WebSocket, is reported as failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import os
import shlex
import statistics
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import socketio
from _benchkit import cpu_seconds, join, process_tree, serve
from bench_server_cpu import CONFIGS, drive

from a2c_testkit.processes import bin_path, free_port

HERE = Path(__file__).resolve().parent
#: ``uvicorn`` stacks: name -> (ws, loop); http is httptools in all of them.
UVICORN = {
    "uvicorn": ("auto", "uvloop"),
    "uvicorn-websockets": ("websockets", "uvloop"),
    "uvicorn-wsproto": ("wsproto", "uvloop"),
    "uvicorn-asyncio": ("auto", "asyncio"),
}
AIOHTTP = {"aiohttp": "uvloop", "aiohttp-asyncio": "asyncio"}
RAW_STACKS = (*UVICORN, *AIOHTTP, "granian")
A2C_STACKS = (*UVICORN, "granian")
CORE_STACKS = ("uvicorn", *AIOHTTP)
LABELS = {"raw": "relay", "a2c": "a2c", "core": "a2c core"}
A2C_ARGS_ENV = "A2C_BENCH_ARGS"  # a2c-server flags for the granian factory


def argv_for(kind: str, stack: str, port: int, extra: list[str]) -> list[str]:
    """The command line that serves ``kind`` ("raw", "a2c", "core") under ``stack``."""
    me = [sys.executable, __file__, "--serve", kind, stack, str(port)]
    if stack == "granian":
        target = ["--factory", "bench_stack:a2c_app"] if kind == "a2c" else ["raw_relay:app"]
        return [bin_path("granian"), "--interface", "asgi", "--loop", "uvloop",
                "--host", "127.0.0.1", "--port", str(port), "--working-dir", str(HERE),
                "--log-level", "warning", *target]  # fmt: skip
    if kind == "a2c" and stack == "uvicorn":
        return [bin_path("a2c-server"), "--port", str(port), *extra]
    return [*me, *extra]


def serve_here(kind: str, stack: str, port: int, extra: list[str]) -> None:
    """``--serve``: run ``kind`` under a ``uvicorn`` or ``aiohttp`` stack in this process."""
    if kind == "core":
        serve_core(stack, port, extra)
        return
    if stack in AIOHTTP:
        from raw_relay import relay

        _serve_aiohttp(relay("aiohttp"), stack, port)
        return
    ws, loop = UVICORN[stack]
    if kind == "raw":
        import uvicorn
        from raw_relay import app as relay_app

        uvicorn.run(relay_app, host="127.0.0.1", port=port, log_level="warning", loop=loop,
                    http="httptools", ws=ws)  # fmt: skip
        return
    # a2c-server builds its own uvicorn.Config: only the protocol choices change here.
    import uvicorn

    stock = uvicorn.Config.__init__

    def config(self: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        stock(self, *args, **{**kwargs, "ws": ws, "loop": loop})

    uvicorn.Config.__init__ = config  # type: ignore[method-assign]
    from a2c_server._cli import main as a2c_main

    a2c_main(["--port", str(port), *extra])


def serve_core(stack: str, port: int, extra: list[str]) -> None:
    """``a2c-server``'s Socket.IO server alone (no ASGI edge) under uvicorn or aiohttp.

    What the aiohttp stack would save ``a2c-server``: its relay (namespace, fence, codec)
    without the layers that are ASGI only (version gate, Host guard, polling screen,
    oversize watch, open requests, console, ``/metrics``), the same under both stacks.
    """
    from a2c_server import create_app
    from a2c_server._cli import settings_from_args
    from a2c_server._observe._logs import configure_logging
    from a2c_server._relay._sio import SmcpSocketServer

    settings = settings_from_args(["--port", str(port), *extra])
    configure_logging(settings)
    if stack in AIOHTTP:
        stock = SmcpSocketServer.__init__

        def aiohttp_mode(self: SmcpSocketServer, *args: Any, **kwargs: Any) -> None:
            stock(self, *args, **{**kwargs, "async_mode": "aiohttp"})

        SmcpSocketServer.__init__ = aiohttp_mode  # type: ignore[method-assign]
        _scope_for_aiohttp()
        _serve_aiohttp(create_app(settings).sio, stack, port)
        return
    import uvicorn

    app = socketio.ASGIApp(create_app(settings).sio)
    uvicorn.run(app, host="127.0.0.1", port=port, log_config=None, loop="uvloop",
                http="httptools")  # fmt: skip


def _scope_for_aiohttp() -> None:
    """Give the aiohttp driver's environ the two ASGI scope keys the namespace reads.

    ``a2c-server`` reads the protocol version and the peer from ``environ["asgi.scope"]``
    (one of the things a port to aiohttp would change); python-engineio's aiohttp driver
    builds a WSGI-style environ without it. A bench-only shim, outside the package.
    """
    from engineio.async_drivers import aiohttp as driver

    stock = driver._async["translate_request"]

    def translate(request: Any) -> dict[str, Any]:
        environ: dict[str, Any] = stock(request)
        environ["asgi.scope"] = {
            "query_string": environ.get("QUERY_STRING", "").encode("latin-1"),
            "client": (environ.get("REMOTE_ADDR", "127.0.0.1"), 0),
        }
        return environ

    driver._async["translate_request"] = translate


def _serve_aiohttp(sio: socketio.AsyncServer, stack: str, port: int) -> None:
    from aiohttp import web

    app = web.Application()
    sio.attach(app)
    with asyncio.Runner(loop_factory=_loop_factory(AIOHTTP[stack])) as runner:
        runner.run(_run_aiohttp(web.AppRunner(app, access_log=None), port))


def _loop_factory(loop: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    if loop == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return None


async def _run_aiohttp(runner: Any, port: int) -> None:
    from aiohttp import web

    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    await asyncio.Event().wait()


def a2c_app() -> Any:
    """granian's factory: ``a2c-server``'s ASGI app, flags from ``$A2C_BENCH_ARGS``."""
    from a2c_server import create_app
    from a2c_server._cli import settings_from_args
    from a2c_server._observe._logs import configure_logging

    settings = settings_from_args(shlex.split(os.environ[A2C_ARGS_ENV]))
    configure_logging(settings)
    return create_app(settings)


@attrs.define
class Target:
    """One server under test, its load and what it cost."""

    kind: str
    stack: str
    url: str
    pids: list[int]
    agents: list[socketio.AsyncClient] = attrs.Factory(list)
    computers: subprocess.Popen[bytes] | None = None
    cpu: dict[tuple[int, int], float] = attrs.Factory(dict)
    calls: dict[tuple[int, int], int] = attrs.Factory(dict)

    @property
    def label(self) -> str:
        return f"{LABELS[self.kind]} / {self.stack}"

    def cpu_now(self) -> float:
        return sum(cpu_seconds(pid) for pid in self.pids)

    async def batch(self, config: tuple[int, int], calls: int) -> None:
        before = self.cpu_now()
        await drive(self.agents[: config[1]], calls, config[0])
        self.cpu[config] = self.cpu.get(config, 0.0) + self.cpu_now() - before
        self.calls[config] = self.calls.get(config, 0) + calls

    def per_call(self, config: tuple[int, int]) -> float:
        return self.cpu[config] / self.calls[config]


@contextlib.asynccontextmanager
async def running(
    kind: str, stack: str, offices: int, extra: list[str], failed: dict[str, str]
) -> AsyncIterator[Target | None]:
    """``kind`` under ``stack`` with its offices joined; None (and why in ``failed``)."""
    port = free_port()
    label = f"{LABELS[kind]} / {stack}"
    env = {**os.environ, A2C_ARGS_ENV: shlex.join(["--port", str(port), *extra])}
    try:
        async with serve(argv_for(kind, stack, port, extra), port, env) as (url, pid):
            await asyncio.sleep(1)  # granian forks its worker after the listening socket
            target = Target(kind, stack, url, process_tree(pid))
            try:
                await asyncio.wait_for(_populate(target, offices), 90)
            except Exception as exc:
                failed[label] = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                if isinstance(exc, TimeoutError):
                    failed[label] += " (no WebSocket upgrade within 90 s?)"
                await _empty(target)
                yield None
                return
            try:
                yield target
            finally:
                await _empty(target)
    except (RuntimeError, TimeoutError) as exc:
        failed[label] = f"did not start: {exc}"
        yield None


async def _populate(target: Target, offices: int) -> None:
    computers = subprocess.Popen(
        [sys.executable, str(HERE / "bench_server_cpu.py"), "--computers", target.url,
         _wire(target.kind), str(offices)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )  # fmt: skip
    target.computers = computers
    assert computers.stdout is not None
    line = await asyncio.get_running_loop().run_in_executor(None, computers.stdout.readline)
    if line.strip() != b"ready":
        raise RuntimeError("the Computers could not join")
    for index in range(offices):
        agent = socketio.AsyncClient(reconnection=False, handle_sigint=False)
        target.agents.append(agent)
        name, office = f"agent-{index}", f"office-{index}"
        await join(agent, target.url, _wire(target.kind), "agent", name, office)


def _wire(kind: str) -> str:
    return "raw" if kind == "raw" else "a2c"  # the core joins offices like a2c-server


async def _empty(target: Target) -> None:
    for agent in target.agents:
        with contextlib.suppress(Exception):
            await agent.disconnect()
    if target.computers is not None:
        if target.computers.stdin is not None:
            target.computers.stdin.close()
        try:
            target.computers.wait(timeout=30)
        except subprocess.TimeoutExpired:
            target.computers.kill()


async def measure(
    wanted: list[tuple[str, str]], calls: int, batch: int, extra: list[str],
    failed: dict[str, str],
) -> list[Target]:  # fmt: skip
    """One round: every wanted server at once, the load visiting them in turn."""
    offices = max(m for _, m in CONFIGS)
    async with contextlib.AsyncExitStack() as stack:
        targets: list[Target] = []
        for kind, name in wanted:
            target = await stack.enter_async_context(running(kind, name, offices, extra, failed))
            if target is not None:
                targets.append(target)
        for config in CONFIGS:
            for target in targets:
                await drive(target.agents[: config[1]], 200, config[0])  # warm-up
            for _ in range(max(1, calls // batch)):
                for target in targets:
                    await target.batch(config, batch)
        return targets


def report(rounds: list[list[Target]], calls: int, batch: int) -> None:
    """Two tables: µs per call (median of the rounds); ratio to the reference of its kind."""
    labels = [t.label for t in rounds[0]]
    by_label = [{t.label: t for t in targets} for targets in rounds]
    head = f"{'stack':<26}" + "".join(f"{f'{c[0]} x {c[1]}':>20}" for c in CONFIGS)
    print(f"{calls} calls per configuration and stack, in batches of {batch}, {len(rounds)} "
          f"rounds.\n\nServer CPU µs per relayed call (median of the rounds):\n{head}")  # fmt: skip
    for label in labels:
        micros = [
            statistics.median(r[label].per_call(c) for r in by_label if label in r) * 1e6
            for c in CONFIGS
        ]
        print(f"{label:<26}" + "".join(f"{us:>20.0f}" for us in micros))
    print(f"\nRatio to the first row of its kind (median, range over the rounds):\n{head}")
    for label in labels:
        base = next(x for x in labels if x.split(" /")[0] == label.split(" /")[0])
        cells = []
        for config in CONFIGS:
            ratios = [
                r[label].per_call(config) / r[base].per_call(config)
                for r in by_label
                if label in r and base in r
            ]
            median = statistics.median(ratios)
            cells.append(f"{median:.2f}x ({min(ratios):.2f}..{max(ratios):.2f})")
        print(f"{label:<26}" + "".join(f"{cell:>20}" for cell in cells))


async def main_async(args: argparse.Namespace, extra: list[str]) -> None:
    wanted = [("raw", s) for s in args.stacks] + [("a2c", s) for s in args.a2c]
    wanted += [("core", s) for s in args.core]
    failed: dict[str, str] = {}
    rounds: list[list[Target]] = []
    for index in range(args.rounds):
        rounds.append(await measure(wanted, args.calls, args.batch, extra, failed))
        print(f"round {index + 1}/{args.rounds} done", file=sys.stderr)
    report(rounds, args.calls, args.batch)
    for label, why in failed.items():
        print(f"FAILED {label}: {why}")


def _names(text: str, allowed: tuple[str, ...]) -> list[str]:
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown stack {unknown}; known: {', '.join(allowed)}")
    if "granian" in names and importlib.util.find_spec("granian") is None:
        print("granian is not installed (uv pip install granian): skipped", file=sys.stderr)
        names.remove("granian")
    return names


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        kind, stack, port = sys.argv[2], sys.argv[3], int(sys.argv[4])
        serve_here(kind, stack, port, sys.argv[5:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="per configuration and stack")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=100, help="calls per visit to a stack")
    parser.add_argument(
        "--stacks", default=",".join(RAW_STACKS), type=lambda t: _names(t, RAW_STACKS),
        help=f"stacks serving the bare relay, the first is the reference "
        f"(default: {','.join(RAW_STACKS)})",
    )  # fmt: skip
    parser.add_argument(
        "--a2c", default="", type=lambda t: _names(t, A2C_STACKS),
        help=f"stacks serving a2c-server, the first is the reference (of {','.join(A2C_STACKS)}"
        "; default none); a2c-server flags may follow the bench's own",
    )  # fmt: skip
    parser.add_argument(
        "--core", default="", type=lambda t: _names(t, CORE_STACKS),
        help=f"stacks serving a2c-server's Socket.IO server without its ASGI edge, to see "
        f"what aiohttp would save it (of {','.join(CORE_STACKS)}; default none)",
    )  # fmt: skip
    args, extra = parser.parse_known_args()
    asyncio.run(main_async(args, extra))


if __name__ == "__main__":
    main()
