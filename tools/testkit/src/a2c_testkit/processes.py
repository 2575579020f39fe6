"""Run the project's real commands as child processes, for the integration suite.

Every child starts in its own process group, so stopping it also stops what it spawned
(MCP servers under a Computer): no orphans even when a test fails half-way. Output goes to
a log file per process, which a failing test prints (see tests-integration/conftest.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import httpx

__all__ = [
    "ManagedProcess",
    "bin_path",
    "free_port",
    "spawn",
    "wait_until_healthy",
]


def bin_path(command: str) -> str:
    """The console script ``command`` installed next to this interpreter."""
    candidate = Path(sys.executable).parent / command
    if not candidate.exists():
        raise FileNotFoundError(f"{command} is not installed in {candidate.parent}")
    return str(candidate)


# What a one-role install lacks and the workspace venv holds (see _lean/sitecustomize.py):
# the Computer and the Agent need neither; the Server needs redis for --redis and no aiohttp
# (python-socketio's client side looks for it).
_ABSENT = {"a2c-computer": "trio,redis", "a2c-agent": "trio,redis", "a2c-server": "trio,aiohttp"}
_LEAN = Path(__file__).resolve().parent / "_lean"


def _role_env(argv: Sequence[str]) -> dict[str, str]:
    """PYTHONPATH and A2C_TESTKIT_ABSENT for a role's command, nothing for anything else."""
    absent = _ABSENT.get(Path(argv[0]).name) if argv else None
    if absent is None:
        return {}
    path = os.pathsep.join(p for p in (str(_LEAN), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "A2C_TESTKIT_ABSENT": absent}


#: the low end of the ports free_port picks from (below it: well-known services' habits)
_LOW_PORT = 20000


def _ephemeral_floor() -> int | None:
    """The lowest port the kernel hands out on its own, when this system says (Linux)."""
    try:
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        return int(text.split()[0])
    except (OSError, ValueError, IndexError):
        return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago.

    Picked below the kernel's ephemeral range where there is one: a port the kernel chose
    for ``bind(0)`` is the next one it may give to any outgoing connection or other
    ``bind(0)`` in the meantime, and a test's server then fails with "Address already in use".
    """
    floor = _ephemeral_floor()
    if floor is not None and floor > _LOW_PORT + 1000:
        for _ in range(50):
            port = random.randrange(_LOW_PORT, floor)
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        chosen: int = sock.getsockname()[1]
        return chosen


class ManagedProcess:
    """A child process with its own process group and a log file."""

    def __init__(
        self, name: str, argv: Sequence[str], log_path: Path, popen: subprocess.Popen[bytes]
    ):
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.popen = popen

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def running(self) -> bool:
        return self.popen.poll() is None

    def logs(self) -> str:
        """Everything the process printed so far (stdout and stderr)."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def kill(self) -> None:
        """SIGKILL the whole process group at once (a crash, not a shutdown)."""
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)

    async def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, wait up to ``timeout``, then SIGKILL the group. Returns the exit code."""
        if self.running:
            self._signal_group(signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while self.running and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        # Children that ignored SIGTERM (or outlived their parent) go with the group.
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)
        return self.popen.returncode

    async def wait_for_log(self, text: str, timeout: float = 30.0) -> None:
        """Wait until ``text`` appears in the process output."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.logs():
                return
            if not self.running:
                break
            await asyncio.sleep(0.05)
        raise TimeoutError(
            f"{self.name}: {text!r} not seen in output within {timeout}s "
            f"(running={self.running})\n--- log ---\n{self.logs()[-4000:]}"
        )


@contextlib.asynccontextmanager
async def spawn(
    name: str,
    argv: Sequence[str],
    *,
    log_dir: Path,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> AsyncIterator[ManagedProcess]:
    """Start ``argv`` in a new process group; stop the group on exit, whatever happened."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{name}.log"
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **_role_env(argv), **(env or {})}
    with log_path.open("ab") as log:
        popen = subprocess.Popen(
            list(argv),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=full_env,
            cwd=cwd,
            start_new_session=True,
        )
    process = ManagedProcess(name, argv, log_path, popen)
    try:
        yield process
    finally:
        await process.stop()


async def wait_until_healthy(url: str, process: ManagedProcess, timeout: float = 30.0) -> None:
    """Poll ``url`` until it answers 200; fail early (with the log) if the process died."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if not process.running:
                code = process.popen.returncode
                raise RuntimeError(f"{process.name} exited with {code}\n{process.logs()[-4000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(url)).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise TimeoutError(f"{url} not healthy within {timeout}s\n{process.logs()[-4000:]}")
