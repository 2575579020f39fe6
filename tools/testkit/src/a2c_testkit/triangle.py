"""The whole deployment as separate processes: ``a2c-server``, ``a2c-computer run`` and MCP
servers, for ``tests-integration/``.

Each piece is an async context manager that starts the real command on a free port and
stops its whole process group on exit. Scenes (see :mod:`a2c_testkit.mcp_servers.scene`)
describe the MCP servers' windows inline in each test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .processes import ManagedProcess, bin_path, free_port, spawn, wait_until_healthy

__all__ = [
    "Deployment",
    "ServerProcess",
    "computer_process",
    "deployment",
    "eventually",
    "scene_http_process",
    "server_process",
    "stdio_scene_entry",
    "streamable_entry",
    "write_config",
    "write_scene",
]


@attrs.frozen
class ServerProcess:
    url: str
    port: int
    process: ManagedProcess


@contextlib.asynccontextmanager
async def server_process(
    log_dir: Path,
    *,
    port: int | None = None,
    protocol_version: str | None = None,
    extra_args: Sequence[str] = (),
    name: str = "server",
    track: Callable[[ManagedProcess], object] | None = None,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[ServerProcess]:
    """``a2c-server`` on 127.0.0.1 (a free port unless given), healthy before it yields;
    ``env`` adds environment variables (``PYTHONPATH`` to run another build, say)."""
    chosen = port or free_port()
    argv = [
        bin_path("a2c-server"),
        "--host",
        "127.0.0.1",
        "--port",
        str(chosen),
        "--log-level",
        "info",
    ]
    if protocol_version is not None:
        argv += ["--protocol-version", protocol_version]
    argv += list(extra_args)
    async with spawn(name, argv, log_dir=log_dir, env=dict(env) if env else None) as process:
        if track is not None:
            track(process)
        url = f"http://127.0.0.1:{chosen}"
        await wait_until_healthy(f"{url}/healthz", process)
        yield ServerProcess(url=url, port=chosen, process=process)


@contextlib.asynccontextmanager
async def redis_node_process(
    log_dir: Path,
    redis_url: str,
    node_id: str,
    *,
    prefix: str,
    node_ttl: float | None = None,
    port: int | None = None,
    track: Callable[[ManagedProcess], object] | None = None,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[ServerProcess]:
    """``a2c-server --redis`` as node ``node_id`` of the deployment keyed by ``prefix``
    (on ``port`` if given: a restarted node keeps its place behind nginx)."""
    args = ["--redis", redis_url, "--node-id", node_id, "--redis-prefix", prefix]
    if node_ttl is not None:
        args += ["--node-ttl", str(node_ttl)]
    async with server_process(
        log_dir, port=port, name=f"node-{node_id}", extra_args=args, track=track, env=env
    ) as server:
        yield server


def write_scene(path: Path, scene: Mapping[str, Any]) -> Path:
    path.write_text(json.dumps(scene, indent=2), encoding="utf-8")
    return path


def stdio_scene_entry(name: str, scene_path: Path, **fields: Any) -> dict[str, Any]:
    """A config entry that runs the scene server over stdio with this interpreter."""
    entry: dict[str, Any] = {
        "type": "stdio",
        "name": name,
        "default_tool_meta": {"auto_apply": True},
        "server_parameters": {
            "command": sys.executable,
            "args": ["-m", "a2c_testkit.mcp_servers.scene", str(scene_path)],
        },
    }
    entry.update(fields)
    return entry


def streamable_entry(
    name: str, url: str, headers: Mapping[str, str] | None = None, **fields: Any
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": "streamable",
        "name": name,
        "default_tool_meta": {"auto_apply": True},
        "server_parameters": {"url": url, "headers": dict(headers) if headers else None},
    }
    entry.update(fields)
    return entry


def write_config(
    path: Path, servers: Sequence[Mapping[str, Any]], inputs: Sequence[Any] = ()
) -> Path:
    doc: dict[str, Any] = {"servers": {s["name"]: dict(s) for s in servers}}
    if inputs:
        doc["inputs"] = list(inputs)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


@contextlib.asynccontextmanager
async def scene_http_process(
    log_dir: Path,
    scene_path: Path,
    *,
    name: str = "mcp-http",
    track: Callable[[ManagedProcess], object] | None = None,
) -> AsyncIterator[str]:
    """The scene server over Streamable HTTP; yields its ``/mcp`` URL."""
    argv = [
        sys.executable,
        "-m",
        "a2c_testkit.mcp_servers.scene",
        str(scene_path),
        "--http-port",
        "0",
        "--announce",
    ]
    async with spawn(name, argv, log_dir=log_dir) as process:
        if track is not None:
            track(process)
        await process.wait_for_log("PORT ", timeout=60)
        line = next(line for line in process.logs().splitlines() if line.startswith("PORT "))
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"


@contextlib.asynccontextmanager
async def computer_process(
    log_dir: Path,
    *,
    config: Path,
    server_url: str,
    office: str,
    name: str,
    token: str | None = None,
    confirm: str = "deny",
    track: Callable[[ManagedProcess], object] | None = None,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    global_args: Sequence[str] = (),
) -> AsyncIterator[ManagedProcess]:
    """``a2c-computer run`` joined to ``office`` (the caller waits for it to appear).

    ``extra_args`` go after ``run``'s options; ``env`` adds environment variables (e.g.
    ``A2C_SMCP_<INPUT>`` values); ``global_args`` go before ``run`` (``--log-format json``).
    """
    argv = [
        bin_path("a2c-computer"), "-v", *global_args, "run", "--config", str(config),
        "--server", server_url, "--office", office, "--name", name, "--confirm", confirm,
    ]  # fmt: skip
    if token is not None:
        argv += ["--token", token]
    argv += list(extra_args)
    async with spawn(
        f"computer-{name}", argv, log_dir=log_dir, env=dict(env) if env else None
    ) as process:
        if track is not None:
            track(process)
        yield process


async def eventually(
    probe: Callable[[], Any],
    *,
    timeout: float = 60.0,
    interval: float = 0.1,
    what: str = "condition",
) -> Any:
    """Await ``probe()`` until it returns something truthy (generous timeouts: CI is noisy)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if asyncio.iscoroutine(last):
            last = await last
        if last:
            return last
        await asyncio.sleep(interval)
    raise TimeoutError(f"{what} not reached within {timeout}s (last value: {last!r})")


@attrs.frozen
class Deployment:
    """A running triangle: the Server process, a joined Agent and a Computer process."""

    server: ServerProcess
    agent: Any  # a2c_agent.AsyncAgent (imported lazily: the testkit must not need it here)
    computer: ManagedProcess
    office: str
    computer_name: str


@contextlib.asynccontextmanager
async def deployment(
    log_dir: Path,
    config: Path,
    *,
    computer_name: str = "box",
    track: Callable[[ManagedProcess], object] | None = None,
    ready_timeout: float = 60.0,
    server_args: Sequence[str] = (),
    computer_args: Sequence[str] = (),
) -> AsyncIterator[Deployment]:
    """Server + Agent "planner" joined to a fresh office + ``a2c-computer run`` with
    ``config``; yields once the Agent's tool cache holds the Computer's tools."""
    from a2c_agent import AsyncAgent

    office = f"office-{uuid.uuid4()}"
    async with (
        server_process(log_dir, track=track, extra_args=server_args) as server,
        AsyncAgent(server.url, name="planner") as agent,
    ):
        await agent.join_office(office)
        async with computer_process(
            log_dir, config=config, server_url=server.url, office=office, name=computer_name,
            track=track, extra_args=computer_args,
        ) as computer:  # fmt: skip
            await eventually(
                lambda: agent.tools.get(computer_name),
                timeout=ready_timeout,
                what="computer joined",
            )
            yield Deployment(server, agent, computer, office, computer_name)
