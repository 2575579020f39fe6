"""A throwaway ``redis-server`` on a free loopback port, for tests of the multi-node Server.

Persistence is off (``--save "" --appendonly no``), so a restart starts empty, like a
Redis that lost its data. The process is stopped (or paused: SIGSTOP) by PID. When the
binary is missing, a test skips with an install hint locally and fails in CI
(``CI=true``): CI installs it.

::

    with redis_server() as redis:
        settings = ServerSettings(redis_url=redis.url)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .processes import free_port

__all__ = ["RedisServer", "redis_server", "require_redis_server"]

INSTALL_HINT = "install it with: apt-get install -y redis-server"


def require_redis_server() -> str:
    """The ``redis-server`` binary; skip (locally) or fail (CI) without it."""
    binary = shutil.which("redis-server")
    if binary is None:
        message = f"redis-server is not installed; {INSTALL_HINT}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return binary


def _pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` child; :meth:`stop` and :meth:`start` keep the same port."""

    def __init__(self, binary: str, port: int, workdir: Path) -> None:
        self.binary = binary
        self.port = port
        self.workdir = workdir
        self.popen: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen is not None else None

    def start(self, timeout: float = 20.0) -> None:
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", str(self.workdir),
                "--logfile", str(self.workdir / "redis.log")]  # fmt: skip
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout
        while not _pong(self.port):
            if self.popen.poll() is not None or time.monotonic() > deadline:
                log = (self.workdir / "redis.log").read_text(errors="replace")[-2000:]
                self.stop()
                pytest.fail(f"redis-server did not start on port {self.port}\n{log}")
            time.sleep(0.05)

    def pause(self) -> None:
        """SIGSTOP by PID: Redis hangs (connections stay open, nothing is answered)."""
        if self.popen is not None:
            os.kill(self.popen.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT by PID, after :meth:`pause`."""
        if self.popen is not None and self.popen.poll() is None:
            os.kill(self.popen.pid, signal.SIGCONT)

    def stop(self) -> None:
        """SIGTERM by PID (SIGKILL after 10 s); the data is gone with it."""
        popen, self.popen = self.popen, None
        if popen is None or popen.poll() is not None:
            return
        os.kill(popen.pid, signal.SIGCONT)  # a paused Redis would not act on SIGTERM
        os.kill(popen.pid, signal.SIGTERM)
        try:
            popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(popen.pid, signal.SIGKILL)
            popen.wait(timeout=10)


@contextlib.contextmanager
def redis_server() -> Iterator[RedisServer]:
    """Start a private ``redis-server`` for the block; see the module docstring."""
    binary = require_redis_server()
    with tempfile.TemporaryDirectory(prefix="a2c-redis-") as workdir:
        server = RedisServer(binary, free_port(), Path(workdir))
        server.start()
        try:
            yield server
        finally:
            server.stop()
