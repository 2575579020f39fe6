"""The shipped nginx recipe (docs/deploy/nginx-sticky.conf) run exactly as its header says,
as an unprivileged user, in front of two ``a2c-server --redis --console`` nodes:

* ``a2c-agent watch --console`` through it reaches a console (the recipe passes
  ``/console`` on; it used to answer 404, "this Server serves no console");
* the nodes, started with the recipe's ``--forwarded-allow-ips 127.0.0.1``, see each
  client's own address, not nginx's;
* nginx starts without root: its pid, logs and temp files stay under ``-p`` (the header
  command used to fail with ``open() "/run/nginx.pid" failed (13: Permission denied)``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2c_agent import AsyncAgent
from a2c_protocol import PROTOCOL_VERSION
from a2c_testkit.nginx import STICKY_CONFIG, nginx_binary, render_sticky
from a2c_testkit.processes import free_port, spawn, wait_until_healthy
from a2c_testkit.redis_server import redis_server
from a2c_testkit.triangle import ServerProcess, eventually, server_process
from a2c_testkit.watch_console import watching

ADMIN = "console-admin-token-for-nginx-91d3"
NOBODY = 65534  # nobody / nogroup on Debian


def documented_command() -> list[str]:
    """The nginx command of the recipe's header, as written there."""
    for line in STICKY_CONFIG.read_text().splitlines():
        found = re.match(r"^#\s+(nginx -p .*)$", line)
        if found:
            return shlex.split(found.group(1))
    raise AssertionError("the nginx recipe no longer documents how to run it")


def documented_node_flags() -> list[str]:
    found = re.search(
        r"Start each node with\s+(--forwarded-allow-ips \S+)", STICKY_CONFIG.read_text()
    )
    assert found, "the nginx recipe no longer names its address for the nodes"
    return found.group(1).split()


@pytest.fixture
def unprivileged_dir() -> Iterator[Path]:
    """A directory an unprivileged nginx can read and write (pytest's tmp is root-only)."""
    path = Path(tempfile.mkdtemp(prefix="a2c-nginx-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.asynccontextmanager
async def recipe_nginx(procs: Any, where: Path, node_ports: list[int]) -> AsyncIterator[str]:
    """nginx started with the header's command (as ``nobody`` when we are root)."""
    binary = nginx_binary()
    port = free_port()
    conf = where / "nginx-sticky.conf"
    conf.write_text(render_sticky(node_ports, port))
    conf.chmod(0o644)
    prefix = where / "a2c-nginx"
    (prefix / "logs").mkdir(parents=True)  # the header's mkdir
    argv = documented_command()
    assert argv[0] == "nginx" and argv[1] == "-p" and argv[3] == "-c", argv
    argv[0], argv[2], argv[4] = binary, str(prefix), str(conf)
    if os.geteuid() == 0:
        os.chown(prefix, NOBODY, NOBODY)
        os.chown(prefix / "logs", NOBODY, NOBODY)
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    async with spawn("nginx-recipe", argv, log_dir=procs.log_dir) as process:
        procs.track(process)
        url = f"http://127.0.0.1:{port}"
        await wait_until_healthy(f"{url}/healthz", process)
        assert (prefix / "logs" / "nginx.pid").exists()
        if os.geteuid() == 0:
            assert (prefix / "logs" / "nginx.pid").stat().st_uid == NOBODY
        yield url


@contextlib.asynccontextmanager
async def console_node(
    procs: Any, redis_url: str, prefix: str, node_id: str
) -> AsyncIterator[ServerProcess]:
    args = ["--redis", redis_url, "--redis-prefix", prefix, "--node-id", node_id,
            "--console", "--admin-token", ADMIN, *documented_node_flags()]  # fmt: skip
    async with server_process(procs.log_dir, name=f"node-{node_id}", track=procs.track,
                              extra_args=args) as node:  # fmt: skip
        yield node


async def connect_from(url: str, source: str) -> None:
    """A role-less polling connect through nginx from ``source``, admitted."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    base = f"{url}/socket.io/?EIO=4&transport=polling"
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        opened = await http.get(f"{base}&a2c_version={PROTOCOL_VERSION}")
        assert opened.status_code == 200, opened.text
        sid = json.loads(opened.text[1:])["sid"]
        sent = await http.post(f"{base}&sid={sid}", content=b"40/smcp,{}")
        assert sent.status_code == 200, sent.text
        answer = await http.get(f"{base}&sid={sid}")
        assert answer.text.startswith("40/smcp,"), answer.text


async def test_console_nginx_recipe_as_documented_serves_the_console(
    procs: Any, unprivileged_dir: Path
) -> None:
    office = f"office-{uuid.uuid4().hex[:8]}"
    prefix = f"nginx-console-{uuid.uuid4().hex[:8]}"
    with redis_server() as redis:
        async with (
            console_node(procs, redis.url, prefix, "a") as node_a,
            console_node(procs, redis.url, prefix, "b") as node_b,
            recipe_nginx(procs, unprivileged_dir, [node_a.port, node_b.port]) as url,
            AsyncAgent(node_a.url, name="planner") as agent,
        ):  # fmt: skip
            await agent.join_office(office)
            async with watching(url, office, "--for", "30", A2C_ADMIN_TOKEN=ADMIN) as watcher:
                await eventually(lambda: "planner (agent)" in watcher.err
                                 or watcher.process.returncode is not None, timeout=60,
                                 what="the console through nginx")  # fmt: skip
                assert "planner (agent)" in watcher.err, watcher.err
                assert "serves no console" not in watcher.err
            # The recipe's proxy address is named on the nodes: a client's own address
            # is what they log (and count), not nginx's.
            await connect_from(url, "127.0.0.7")
            logs = node_a.process.logs() + node_b.process.logs()
            await eventually(lambda: "peer=127.0.0.7" in node_a.process.logs()
                             + node_b.process.logs(), timeout=30,
                             what="the client's address in a node's log")  # fmt: skip
            assert "Traceback" not in logs
