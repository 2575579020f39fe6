"""An OAuth MCP server seen from an Agent: Server and ``a2c-computer run`` processes, the
authorization and MCP servers on loopback, the sign-in as ``auth login`` does it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2c_agent import result_error_code, result_text, tool_authorization
from a2c_computer._config import load_config
from a2c_computer._oauth._login import sign_in
from a2c_computer._oauth._store import FileTokenStore
from a2c_protocol import to_wire
from a2c_testkit.oauth import (
    MemoryAS,
    Watch,
    authorization_app,
    free_loopback_port,
    oauth_mcp_app,
    serve_app,
)
from a2c_testkit.triangle import deployment, eventually, streamable_entry, write_config


async def test_agent_gets_4006_with_hint_until_the_sign_in_then_the_tool_runs(
    procs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("A2C_COMPUTER_STATE_DIR", str(state))  # inherited by the Computer
    monkeypatch.setenv("A2C_COMPUTER_TOKEN_STORE", "file")
    provider = MemoryAS()
    as_port, rs_port, other_port = (free_loopback_port() for _ in range(3))
    as_url = f"http://127.0.0.1:{as_port}"
    oauthy = Watch(oauth_mcp_app("oauthy", provider, rs_port, as_url), provider)
    plain = Watch(oauth_mcp_app("plain", None, other_port, as_url), None)
    entries = [
        streamable_entry(
            "oauthy",
            f"http://127.0.0.1:{rs_port}/mcp",
            tool_prefix="o_",
            auth={"type": "oauth", "scopes": ["mcp"]},
        ),
        streamable_entry("plain", f"http://127.0.0.1:{other_port}/mcp", tool_prefix="p_"),
    ]
    config = write_config(tmp_path / "computer.json", entries)

    async def browser(url: str) -> None:
        async with httpx.AsyncClient(follow_redirects=True, timeout=20) as client:
            assert (await client.get(url)).status_code == 200

    async with (
        serve_app(authorization_app(provider, as_url), as_port),
        serve_app(oauthy, rs_port),
        serve_app(plain, other_port),
        deployment(procs.log_dir, config, track=procs.track) as running,
    ):
        agent = running.agent
        first = await agent.call_tool("box", "o_whoami", {}, timeout=30)
        assert first.is_error and result_error_code(first) == 4006, first
        info = tool_authorization(first)
        assert info is not None and info.mcp_server == "oauthy"
        assert info.message is not None and "a2c-computer auth login oauthy" in info.message

        server = load_config(config).servers["oauthy"]
        store = FileTokenStore(state / "oauth-tokens.json")
        await sign_in("oauthy", server, store, open_url=browser, timeout=30)  # type: ignore[arg-type]

        # The running Computer picks the sign-in up by itself and lists the tools again.
        await eventually(
            lambda: "o_whoami" in {t.name for t in agent.tools.get("box", ())},
            timeout=90,
            what="the signed-in server's tools listed",
        )
        done = await agent.call_tool("box", "o_whoami", {}, timeout=30)
        assert not done.is_error and result_text(done) == "oauthy: hello"

        shown = json.dumps(to_wire(await agent.get_config("box")))
        assert '"oauth"' in shown
        assert all(token not in shown for token in provider.issued)
    assert plain.authorizations == []
    assert oauthy.authorizations and all(a.startswith("Bearer ") for a in oauthy.authorizations)
    log = "".join(p.read_text(errors="replace") for p in procs.log_dir.glob("*"))
    assert "oauthy" in log and all(token not in log for token in provider.issued)
