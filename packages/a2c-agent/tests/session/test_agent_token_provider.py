"""Short-lived tokens: a token provider (sync or async) and ``--token-file`` are asked for a
fresh token at every (re)connect, so an Agent outlives the expiry of each token."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from a2c_agent import AgentState, AsyncAgent
from a2c_server import JwksKeys, JwtAuth, ServerSettings, SharedTokenAuth
from a2c_testkit.issuer import running_issuer
from a2c_testkit.server import running_server

OFFICE = "office-a"
GRANT = {"role": "agent", "name": "alice-agent", "offices": [OFFICE]}
WAIT = 60.0


async def test_agent_async_token_provider_survives_token_expiry() -> None:
    with running_issuer() as issuer:
        auth = JwtAuth(
            issuer=issuer.issuer,
            audience=issuer.audience,
            jwks=JwksKeys(issuer.url, min_refresh=0.2),
            leeway=0,
        )
        handed: list[str] = []

        async def provide() -> dict[str, str]:
            await asyncio.sleep(0)  # a real provider would ask its issuer here
            handed.append(
                issuer.token("alice", GRANT, lifetime=8)
            )  # a loaded machine can take 3 s to connect
            return {"token": handed[-1]}

        reconnected = asyncio.Event()

        def on_state(old: AgentState, new: AgentState) -> None:
            if old is AgentState.RECONNECTING and new is AgentState.CONNECTED:
                reconnected.set()

        async with running_server(ServerSettings(), auth=auth) as srv:
            agent = AsyncAgent(srv.url, name="alice-agent", auth=provide, reconnect_delay=0.1)
            agent.add_state_listener(on_state)
            try:
                await agent.open()
                await agent.join_office(OFFICE)
                # The Server cuts the session at exp; the Agent comes back with a new token.
                await asyncio.wait_for(reconnected.wait(), WAIT)
                assert len(handed) >= 2 and handed[0] != handed[1]
                assert agent.office_id == OFFICE
                members = await srv.app.store.office_members(OFFICE)
                assert [m.name for m in members] == ["alice-agent"]
            finally:
                await agent.close()


async def run_cli(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_agent", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", **env},
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_agent_cli_token_file(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    async with running_server(ServerSettings(), auth=SharedTokenAuth("s3cret-token")) as srv:
        env = {"A2C_SERVER_URL": srv.url, "A2C_OFFICE": OFFICE}
        code, _, err = await run_cli("--token-file", str(token_file), "room", env=env)
        assert code == 0, err
        token_file.write_text("rotated-away")  # read again: the new content is sent
        code, _, err = await run_cli("room", env={**env, "A2C_TOKEN_FILE": str(token_file)})
        assert code == 1 and "401" in err and "rotated-away" not in err
    usage = [
        (["--token-file", str(tmp_path / "missing")], "missing"),
        (["--token-file", str(token_file), "--token", "t"], "not both"),
    ]
    (tmp_path / "empty").write_text(" \n")
    usage.append((["--token-file", str(tmp_path / "empty")], "is empty"))
    for extra, said in usage:
        code, _, err = await run_cli(
            "--server", "http://127.0.0.1:9", "--office", OFFICE, *extra, "room", env={}
        )
        assert code == 2 and said in err and "Traceback" not in err, err
        assert "usage:" not in err, err  # one line saying what is wrong, not the usage block


async def test_agent_cli_takes_the_name_its_grant_fixes(tmp_path: Path) -> None:
    """A grant that fixes the name (``a2c.name``) refuses every other: without ``--name`` the
    CLI uses that one (its random default was always refused); ``--name`` still wins."""
    with running_issuer() as issuer:
        auth = JwtAuth(
            issuer=issuer.issuer, audience=issuer.audience,
            jwks=JwksKeys(issuer.url, min_refresh=0.2),
        )  # fmt: skip
        token_file = tmp_path / "token"
        token_file.write_text(issuer.token("alice", GRANT) + "\n")
        async with running_server(ServerSettings(), auth=auth) as srv:
            env = {"A2C_SERVER_URL": srv.url, "A2C_OFFICE": OFFICE}
            code, out, err = await run_cli("--token-file", str(token_file), "--json", "room",
                                           env=env)  # fmt: skip
            assert code == 0, err
            assert '"name": "alice-agent"' in out, out
            code, _, err = await run_cli("--token", issuer.token("alice", GRANT), "--name",
                                         "other", "room", env=env)  # fmt: skip
            assert code == 1 and "may not use the name 'other'" in err, err


def test_granted_name_reads_only_a_jwt_grant() -> None:
    from a2c_agent._cli._args import granted_name

    assert granted_name("not-a-jwt") is None
    assert granted_name("a.%%%.c") is None
    assert granted_name("e30.eyJhMmMiOnsibmFtZSI6ICJ4In19.sig") == "x"  # {"a2c":{"name":"x"}}
    assert granted_name("e30.eyJhMmMiOnsib2ZmaWNlcyI6IFsibyJdfX0.sig") is None  # no name
