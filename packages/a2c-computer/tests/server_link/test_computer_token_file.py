"""``a2c-computer run --token-file``: the token is read again at every (re)connect, so a
Computer outlives the expiry of each short-lived token that another process renews."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs

from a2c_protocol import Event
from a2c_server import JwksKeys, JwtAuth, ServerSettings
from a2c_testkit.issuer import running_issuer
from a2c_testkit.server import connect_raw, running_server

OFFICE = "office-a"
PC = {"role": "computer", "name": "alice-pc", "offices": [OFFICE]}
AGENT = {"role": "agent", "name": "alice-agent", "offices": [OFFICE]}


async def cli(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_computer._cli", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, err.decode()


@attrs.frozen
class _Office:
    issuer: Any
    agent: Any
    proc: asyncio.subprocess.Process
    token_file: Path


@contextlib.asynccontextmanager
async def _computer_with_a_token_file(tmp_path: Path) -> AsyncIterator[_Office]:
    """A JWT Server (no clock-skew leeway), alice's Agent in the office, and ``a2c-computer
    run --token-file`` started with a token that expires soon; SIGTERM at the end."""
    config = tmp_path / "computer.json"
    config.write_text(json.dumps({"servers": {}}))
    token_file = tmp_path / "token"
    with running_issuer() as issuer:
        auth = JwtAuth(
            issuer=issuer.issuer, audience=issuer.audience,
            jwks=JwksKeys(issuer.url, min_refresh=0.2), leeway=0,
        )  # fmt: skip
        async with (
            running_server(ServerSettings(), auth=auth) as srv,
            connect_raw(srv, "agent", auth={"token": issuer.token("alice", AGENT)}) as agent,
        ):
            assert await agent.join("agent", "alice-agent", OFFICE) == (True, None)
            # Issued only now and long enough for a Computer to start and join on a loaded
            # machine (a process start alone can take seconds), short enough to expire soon.
            token_file.write_text(issuer.token("alice", PC, lifetime=20))
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "a2c_computer._cli", "run", "--config", str(config),
                "--server", srv.url, "--office", OFFICE, "--name", "alice-pc",
                "--token-file", str(token_file), "--socketio-path", srv.socketio_path,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
                stdin=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
            try:
                yield _Office(issuer, agent, proc, token_file)
            finally:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)


async def _membership(office: _Office, event: Event) -> None:
    _, note = await office.agent.next_notification(event, timeout=60)
    assert isinstance(note, dict) and note["computer"] == "alice-pc"


async def test_computer_token_file_is_read_again_after_the_token_expired(tmp_path: Path) -> None:
    async with _computer_with_a_token_file(tmp_path) as office:
        await _membership(office, Event.NOTIFY_ENTER_OFFICE)
        # The renewer writes a fresh token; the old one expires and the Server
        # disconnects the Computer, which comes back with the file's new token.
        office.token_file.write_text(office.issuer.token("alice", PC, lifetime=600) + "\n")
        await _membership(office, Event.NOTIFY_LEAVE_OFFICE)
        await _membership(office, Event.NOTIFY_ENTER_OFFICE)
        office.proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(office.proc.communicate(), 60)
    text = err.decode()
    assert "Traceback" not in text
    assert office.token_file.read_text().strip() not in text  # the token never in the logs
    # The Server said why (notify:a2c_session_expired): no bare "connection lost".
    assert "disconnected by the Server: token expired; reconnecting" in text, text
    assert "disconnected from the Server" not in text, text


async def _stderr_until(stream: asyncio.StreamReader, needle: str, seen: list[str]) -> None:
    while True:
        line = await stream.readline()
        if not line:
            raise AssertionError(f"stderr ended before {needle!r}: {''.join(seen)}")
        seen.append(line.decode())
        if needle in seen[-1]:
            return


async def test_computer_waits_out_a_token_renewed_late(tmp_path: Path) -> None:
    """The renewer is late: the first reconnects are refused with 401 (token expired). The
    Computer keeps trying, reading the file each time, and comes back once it is renewed
    (it used to give up for good at the first refusal)."""
    seen: list[str] = []
    async with _computer_with_a_token_file(tmp_path) as office:
        assert office.proc.stderr is not None
        await _membership(office, Event.NOTIFY_ENTER_OFFICE)
        await _membership(office, Event.NOTIFY_LEAVE_OFFICE)
        # The file still holds the expired token: the Server refuses the reconnect.
        await asyncio.wait_for(_stderr_until(office.proc.stderr, "reconnect refused", seen), 60)
        assert "token expired" in seen[-1] and "giving up" not in "".join(seen)
        office.token_file.write_text(office.issuer.token("alice", PC, lifetime=600) + "\n")
        await _membership(office, Event.NOTIFY_ENTER_OFFICE)
        office.proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(office.proc.communicate(), 60)
    text = "".join(seen) + err.decode()
    assert "Traceback" not in text
    # One line for the refusal it waited out, however many attempts were refused.
    assert text.count("reconnect refused") == 1, text


async def test_computer_token_file_usage_errors(tmp_path: Path) -> None:
    config = tmp_path / "computer.json"
    config.write_text(json.dumps({"servers": {}}))
    base = ["run", "--config", str(config), "--server", "http://127.0.0.1:9", "--office", "o",
            "--name", "n"]  # fmt: skip
    (tmp_path / "empty").write_text("\n")
    for extra, said in (
        (["--token-file", str(tmp_path / "missing")], "missing"),
        (["--token-file", str(tmp_path / "empty")], "is empty"),
        (["--token-file", str(config), "--token", "t"], "not both"),
    ):
        code, err = await cli(*base, *extra)
        assert code == 2 and said in err and "Traceback" not in err, err
        assert "usage:" not in err, err
