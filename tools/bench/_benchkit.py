"""Shared pieces of the process-level server benchmarks (not a benchmark itself).

The load side is SDK-free on purpose: plain python-socketio clients that speak the wire by
hand, so they cost the same against every server under test and measure nothing of ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import httpx
import socketio

from a2c_testkit.processes import bin_path, free_port

__all__ = [
    "NAMESPACE",
    "cpu_seconds",
    "join",
    "process_tree",
    "rss_bytes",
    "serve",
    "server",
    "source_env",
]

NAMESPACE = "/smcp"
HERE = Path(__file__).resolve().parent
TICKS = os.sysconf("SC_CLK_TCK")


def source_env(source: str | None) -> dict[str, str] | None:
    """The environment that runs a server from another build's sources (``--server-source``),
    or None for this checkout's."""
    if source is None:
        return None
    return {"PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def process_tree(pid: int) -> list[int]:
    """``pid`` and its live descendants now (a server's worker processes), from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, index = [pid], 0
    while index < len(tree):
        tree.extend(parents.get(tree[index], ()))
        index += 1
    return tree


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


@contextlib.asynccontextmanager
async def server(
    kind: str,
    extra: Sequence[str] = (),
    log_level: str | None = "WARNING",
    source: str | None = None,
) -> AsyncIterator[tuple[str, int]]:
    """Start the server of ``kind`` ("raw" or "a2c", plus ``extra`` flags); yield URL, pid.

    ``log_level`` None leaves ``a2c-server`` at its default level (its log goes to this
    process's stderr), which is what an operator runs. ``source``: a directory holding
    another build's ``a2c_server`` package (``git archive`` of a commit), imported instead
    of this checkout's, to measure a before and an after in one run.
    """
    port = free_port()
    if kind == "raw":
        argv = [sys.executable, str(HERE / "raw_relay.py"), str(port)]
    else:
        level = ["--log-level", log_level] if log_level is not None else []
        argv = [bin_path("a2c-server"), "--port", str(port), *level, *extra]
    extra_env = source_env(source)
    env = {**os.environ, **extra_env} if extra_env is not None else None
    async with serve(argv, port, env) as started:
        yield started


@contextlib.asynccontextmanager
async def serve(
    argv: Sequence[str], port: int, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[str, int]]:
    """Run the server ``argv`` (listening on 127.0.0.1:``port``); yield its URL and pid."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        await _wait_listening(url, proc)
        yield url, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def _wait_listening(url: str, proc: subprocess.Popen[bytes]) -> None:
    # Generous: on a loaded 2-core machine a bare relay has been seen to need 36 s to start.
    async with httpx.AsyncClient(timeout=2) as http:
        for _ in range(1800):
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                await http.get(url + "/socket.io/?EIO=4&transport=polling&a2c_version=0.2.0")
                return
            await asyncio.sleep(0.1)
    raise TimeoutError(f"{url} did not start")


async def join(
    client: socketio.AsyncClient, url: str, kind: str, role: str, name: str, office: str
) -> None:
    await client.connect(
        f"{url}?a2c_version=0.2.0",
        auth={"role": role, "name": name},
        namespaces=[NAMESPACE],
        wait_timeout=30,
    )
    if kind == "a2c":
        ack = await client.call(
            "server:join_office",
            {"role": role, "name": name, "office_id": office},
            namespace=NAMESPACE,
            timeout=30,
        )
        if ack is not True and not (isinstance(ack, list | tuple) and ack[0] is True):
            raise RuntimeError(f"{name} could not join {office}: {ack!r}")
    while client.transport() != "websocket":
        await asyncio.sleep(0.01)
