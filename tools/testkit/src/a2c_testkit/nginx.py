"""Real nginx in front of Server nodes, with the shipped ``docs/deploy/nginx-sticky.conf``.

``nginx_process`` renders the shipped file for the test's ports (the listen port and the
two upstream nodes; nothing else changes) and runs nginx in the foreground in its own
process group until the block ends. Tests skip without nginx, and fail in CI.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import pytest

from .processes import ManagedProcess, free_port, spawn, wait_until_healthy

__all__ = ["STICKY_CONFIG", "fail_timeout", "nginx_binary", "nginx_process", "render_sticky"]

#: The nginx example the docs ship (docs/server.md, "Sticky sessions").
STICKY_CONFIG = Path(__file__).resolve().parents[4] / "docs" / "deploy" / "nginx-sticky.conf"


def nginx_binary() -> str:
    """The nginx binary; skip (locally) or fail (CI) without it."""
    binary = shutil.which("nginx")
    if binary is None:
        message = "nginx is not installed; install it with: apt-get install -y nginx-light"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return binary


def fail_timeout() -> float:
    """The shipped config's ``fail_timeout``: how long nginx skips a node that failed (a
    rolling restart waits it out before stopping the next node, docs/operations.md)."""
    found = re.search(r"fail_timeout=(\d+)s", STICKY_CONFIG.read_text())
    if found is None:
        raise AssertionError("the shipped nginx config lost its fail_timeout")
    return float(found.group(1))


def render_sticky(node_ports: Sequence[int], port: int, *, sticky: bool = True) -> str:
    """The shipped config listening on ``port`` in front of two nodes on ``node_ports``;
    without the ``hash`` line when ``sticky`` is False (round robin, the control)."""
    text = STICKY_CONFIG.read_text()
    text = text.replace("listen 127.0.0.1:8080;", f"listen 127.0.0.1:{port};")
    for default, node in zip((8001, 8002), node_ports, strict=True):
        text = text.replace(f"127.0.0.1:{default} ", f"127.0.0.1:{node} ")
    if not sticky:
        text = re.sub(r"^\s*hash \$remote_addr consistent;\n", "", text, flags=re.M)
    if "8001" in text or "8080" in text:
        raise AssertionError("the shipped nginx config changed shape: update render_sticky")
    return text


@contextlib.asynccontextmanager
async def nginx_process(
    log_dir: Path,
    prefix: Path,
    node_ports: Sequence[int],
    *,
    sticky: bool = True,
    track: Callable[[ManagedProcess], object] | None = None,
) -> AsyncIterator[str]:
    """nginx with the shipped config in front of ``node_ports``; yields its base URL."""
    binary = nginx_binary()
    port = free_port()
    (prefix / "logs").mkdir(parents=True, exist_ok=True)
    conf = prefix / "nginx.conf"
    conf.write_text(render_sticky(node_ports, port, sticky=sticky))
    directives = "daemon off; error_log stderr info;"
    if os.geteuid() == 0:
        directives += " user root;"  # workers must read the pytest tmp dir
    argv = [binary, "-p", str(prefix), "-c", str(conf), "-g", directives]
    async with spawn(prefix.name, argv, log_dir=log_dir) as process:
        if track is not None:
            track(process)
        url = f"http://127.0.0.1:{port}"
        await wait_until_healthy(f"{url}/healthz", process)
        yield url
