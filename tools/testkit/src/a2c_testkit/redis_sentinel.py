"""Redis behind Sentinel on loopback: a primary, a replica and three sentinels.

All five are ``redis-server`` processes (a sentinel is ``redis-server CONF --sentinel``)
on free 127.0.0.1 ports, each with its config file and log in a private directory, and
stopped by PID. The sentinels monitor the service with quorum 2, call the primary down
after ``down_after_ms`` and give a failover ``failover_timeout_ms``::

    with redis_sentinel() as deployment:
        url = deployment.url  # redis+sentinel://127.0.0.1:P1,...,127.0.0.1:P3/0/SERVICE
        deployment.kill_primary()  # kill -9
        await deployment.wait_promoted()  # a sentinel names the replica as primary
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from a2c_agent import AsyncAgent

from .processes import free_port
from .redis_server import require_redis_server
from .scripted_computer import ScriptedComputer, scripted_tool
from .triangle import ServerProcess, redis_node_process

__all__ = [
    "PONG",
    "SentinelDeployment",
    "echo_office",
    "redis_command",
    "redis_sentinel",
    "sentinel_nodes",
]

SERVICE = "a2c-primary"
#: What ``box`` of :func:`echo_office` answers to ``echo``.
PONG = {"content": [{"type": "text", "text": "pong"}], "isError": False}


def _encode(*args: str | int | bytes) -> bytes:
    out = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _read_reply(sock: socket.socket, buf: bytearray) -> object:
    def line() -> bytes:
        while b"\r\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            buf.extend(chunk)
        index = buf.index(b"\r\n")
        text = bytes(buf[:index])
        del buf[: index + 2]
        return text

    head = line()
    kind, rest = head[:1], head[1:]
    if kind in (b"+", b":"):
        return rest.decode() if kind == b"+" else int(rest)
    if kind == b"-":
        return RuntimeError(rest.decode())
    if kind == b"$":
        size = int(rest)
        if size < 0:
            return None
        while len(buf) < size + 2:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            buf.extend(chunk)
        data = bytes(buf[:size])
        del buf[: size + 2]
        return data
    if kind == b"*":
        count = int(rest)
        return None if count < 0 else [_read_reply(sock, buf) for _ in range(count)]
    raise ConnectionError(f"unexpected reply {head!r}")


def redis_command(
    port: int, *args: str | int | bytes, timeout: float = 2.0, password: str | None = None
) -> object:
    """One command to the Redis (or sentinel) on ``port``; an error reply is returned."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        buf = bytearray()
        if password is not None:
            sock.sendall(_encode("AUTH", password))
            _read_reply(sock, buf)
        sock.sendall(_encode(*args))
        return _read_reply(sock, buf)


def _answers(port: int, password: str | None) -> bool:
    try:
        return redis_command(port, "PING", timeout=1, password=password) == "PONG"
    except OSError:
        return False


class _Proc:
    def __init__(self, binary: str, name: str, port: int, workdir: Path, conf: str,
                 password: str | None = None) -> None:  # fmt: skip
        self.name, self.port, self.workdir = name, port, workdir
        self.password = password
        self.conf = workdir / f"{name}.conf"
        self.conf.write_text(conf, encoding="utf-8")
        self.binary = binary
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self, sentinel: bool, timeout: float = 20.0) -> None:
        argv = [self.binary, str(self.conf)] + (["--sentinel"] if sentinel else [])
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout
        while not _answers(self.port, self.password):
            if self.popen.poll() is not None or time.monotonic() > deadline:
                log = self.workdir / f"{self.name}.log"
                text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                self.stop()
                pytest.fail(f"{self.name} did not start on port {self.port}\n{text}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL by PID: no shutdown, no goodbye to anyone."""
        if self.popen is not None and self.popen.poll() is None:
            os.kill(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=10)

    def stop(self) -> None:
        popen, self.popen = self.popen, None
        if popen is None or popen.poll() is not None:
            return
        os.kill(popen.pid, signal.SIGTERM)
        try:
            popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(popen.pid, signal.SIGKILL)
            popen.wait(timeout=10)


def _server_conf(
    name: str, port: int, workdir: Path, primary: int | None, password: str | None
) -> str:
    lines = [
        f"port {port}", "bind 127.0.0.1", 'save ""', "appendonly no",
        f"dir {workdir}", f"logfile {workdir / f'{name}.log'}",
        # Sentinel must be able to reconfigure and promote it; no disk sync on promotion.
        "repl-diskless-sync yes", "repl-diskless-sync-delay 0",
    ]  # fmt: skip
    if primary is not None:
        lines.append(f"replicaof 127.0.0.1 {primary}")
    if password is not None:  # either may be the primary after a failover
        lines += [f"requirepass {password}", f"masterauth {password}"]
    return "\n".join(lines) + "\n"


def _sentinel_conf(name: str, port: int, workdir: Path, primary: int, down_after_ms: int,
                   failover_timeout_ms: int, password: str | None,
                   sentinel_password: str | None) -> str:  # fmt: skip
    extra = [f"sentinel auth-pass {SERVICE} {password}"] if password else []
    if sentinel_password:  # the sentinels ask it of each other too
        extra += [f"requirepass {sentinel_password}", f"sentinel sentinel-pass {sentinel_password}"]
    return "\n".join([
        f"port {port}", "bind 127.0.0.1", f"dir {workdir}",
        f"logfile {workdir / f'{name}.log'}",
        f"sentinel monitor {SERVICE} 127.0.0.1 {primary} 2",
        f"sentinel down-after-milliseconds {SERVICE} {down_after_ms}",
        f"sentinel failover-timeout {SERVICE} {failover_timeout_ms}",
        f"sentinel parallel-syncs {SERVICE} 1",
        *extra,  # after the monitor line: auth-pass names the service
    ]) + "\n"  # fmt: skip


class SentinelDeployment:
    """A primary, a replica and three sentinels (see the module docstring)."""

    def __init__(self, binary: str, workdir: Path, down_after_ms: int,
                 failover_timeout_ms: int, password: str | None = None,
                 sentinel_password: str | None = None) -> None:  # fmt: skip
        self.password, self.sentinel_password = password, sentinel_password
        self.primary_port, self.replica_port = free_port(), free_port()
        self.primary = _Proc(binary, "primary", self.primary_port, workdir,
                             _server_conf("primary", self.primary_port, workdir, None, password),
                             password)  # fmt: skip
        self.replica = _Proc(binary, "replica", self.replica_port, workdir,
                             _server_conf("replica", self.replica_port, workdir,
                                          self.primary_port, password), password)  # fmt: skip
        self.sentinels = [
            _Proc(binary, f"sentinel{i}", port, workdir,
                  _sentinel_conf(f"sentinel{i}", port, workdir, self.primary_port,
                                 down_after_ms, failover_timeout_ms, password,
                                 sentinel_password), sentinel_password)
            for i, port in enumerate(free_port() for _ in range(3))
        ]  # fmt: skip

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/0/{SERVICE}"

    def start(self) -> None:
        self.primary.start(sentinel=False)
        self.replica.start(sentinel=False)
        self.wait_replicating()
        for sentinel in self.sentinels:
            sentinel.start(sentinel=True)
        # Every sentinel knows the replica and the other sentinels before anything fails.
        deadline = time.monotonic() + 60
        while not all(self._sentinel_ready(s.port) for s in self.sentinels):
            if time.monotonic() > deadline:
                pytest.fail("the sentinels did not discover the replica and each other")
            time.sleep(0.1)

    def _sentinel_ready(self, port: int) -> bool:
        try:
            pw = self.sentinel_password
            replicas = redis_command(port, "SENTINEL", "REPLICAS", SERVICE, password=pw)
            others = redis_command(port, "SENTINEL", "SENTINELS", SERVICE, password=pw)
        except OSError:
            return False
        return (
            isinstance(replicas, list)
            and len(replicas) >= 1
            and (isinstance(others, list) and len(others) >= 2)
        )

    def wait_replicating(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            info = redis_command(self.replica_port, "INFO", "replication", password=self.password)
            if isinstance(info, bytes) and b"master_link_status:up" in info:
                return
            if time.monotonic() > deadline:
                pytest.fail("the replica did not start replicating")
            time.sleep(0.05)

    def primary_address(self) -> int | None:
        """The primary's port as the first sentinel that answers names it."""
        for sentinel in self.sentinels:
            try:
                answer = redis_command(sentinel.port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                       SERVICE, password=self.sentinel_password)  # fmt: skip
            except OSError:
                continue
            if isinstance(answer, list) and len(answer) == 2:
                return int(answer[1])
        return None

    def kill_primary(self) -> None:
        self.primary.kill()

    def stop(self) -> None:
        for proc in [*self.sentinels, self.replica, self.primary]:
            proc.stop()


@contextlib.contextmanager
def redis_sentinel(
    *,
    down_after_ms: int = 1000,
    failover_timeout_ms: int = 3000,
    password: str | None = None,
    sentinel_password: str | None = None,
) -> Iterator[SentinelDeployment]:
    """A started :class:`SentinelDeployment`, stopped after the block; ``password``: the
    primary's and the replica's (``requirepass``), ``sentinel_password``: the sentinels'."""
    binary = require_redis_server()
    with tempfile.TemporaryDirectory(prefix="a2c-sentinel-") as workdir:
        deployment = SentinelDeployment(
            binary, Path(workdir), down_after_ms, failover_timeout_ms, password, sentinel_password
        )
        try:
            deployment.start()
            yield deployment
        finally:
            deployment.stop()


async def sentinel_nodes(
    stack: AsyncExitStack,
    log_dir: Path,
    deployment: SentinelDeployment,
    *,
    prefix: str,
    node_ttl: float | None = None,
) -> tuple[ServerProcess, ServerProcess]:
    """Nodes ``n1`` and ``n2`` on ``deployment``'s registry, stopped with ``stack``."""
    n1, n2 = [
        await stack.enter_async_context(
            redis_node_process(log_dir, deployment.url, node, prefix=prefix, node_ttl=node_ttl)
        )
        for node in ("n1", "n2")
    ]
    return n1, n2


async def echo_office(
    stack: AsyncExitStack, computer_url: str, agent_url: str, office: str
) -> tuple[ScriptedComputer, AsyncAgent]:
    """A scripted Computer ``box`` answering ``echo`` with :data:`PONG` at ``computer_url``
    and an Agent ``planner`` at ``agent_url``, both in ``office``, stopped with ``stack``."""
    box = ScriptedComputer(computer_url, name="box", office_id=office)
    box.tools = [scripted_tool("echo")]
    box.tool_results["echo"] = PONG
    await stack.enter_async_context(box)
    planner = await stack.enter_async_context(AsyncAgent(agent_url, name="planner"))
    await planner.join_office(office)
    return box, planner
