"""Logs of the real ``a2c-computer run`` at DEBUG (``-v``): no resolved secret in any line.

Secrets travel every way the issue found them leaking: a query parameter of a Streamable
HTTP URL (httpx's request lines), the password of an SSE URL (the mcp library's DEBUG
lines), a header, a stdio ``command`` that does not exist (the start failure's message)
and the ``auth.token`` sent to the Server. Each secret carries a hex tag that survives any
URL encoding; the tag must not appear in the log. The same run checks the JSON format.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent, result_text
from a2c_testkit.mcp_servers.http_server import serve_http
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config

TAGS = {
    "key": "5be1c2d9aa",
    "pw": "77e0c3f1bb",
    "hdr": "19ad0e6c4f",
    "cmd": "0c9e4d3a21",
}
SECRETS = {
    "key": f"key+{TAGS['key']}/x",
    "pw": f"pw {TAGS['pw']}@x",
    "hdr": f"hdr-{TAGS['hdr']}",
    "cmd": f"cmd-{TAGS['cmd']}",
}
TOKEN_TAG = "4f2b8e6d90"


def _config(path: Path, base: str) -> Path:
    inputs = [
        {"id": key, "type": "promptString", "description": key, "password": True} for key in SECRETS
    ]
    servers = [
        {
            "type": "streamable",
            "name": "remote",
            "default_tool_meta": {"auto_apply": True},
            "server_parameters": {
                "url": f"{base}/mcp/?api_key=${{input:key}}",
                "headers": {"X-Api-Key": "${input:hdr}"},
                "timeout": "PT20S",
            },
        },
        {
            "type": "sse",
            "name": "legacy",
            "default_tool_meta": {"auto_apply": True},
            "tool_meta": {"search": {"alias": "sse_search"}},
            "server_parameters": {
                "url": base.replace("http://", "http://user:${input:pw}@") + "/sse",
                "timeout": 20,
            },
        },
        {
            "type": "stdio",
            "name": "broken",
            "server_parameters": {"command": "/nonexistent/${input:cmd}/mcp-server"},
        },
    ]
    return write_config(path, servers, inputs)


@pytest.mark.parametrize("fmt", ["text", "json"])
async def test_computer_debug_logs_never_show_a_resolved_secret(
    procs: Any, tmp_path: Path, fmt: str
) -> None:
    env = {f"A2C_SMCP_{key.upper()}": value for key, value in SECRETS.items()}
    office = f"office-{uuid.uuid4()}"
    async with (
        serve_http() as base,
        server_process(procs.log_dir, track=procs.track) as server,
        AsyncAgent(server.url, name="planner") as agent,
    ):
        await agent.join_office(office)
        config = _config(tmp_path / "computer.json", base)
        async with computer_process(
            procs.log_dir, config=config, server_url=server.url, office=office, name="box",
            token=f"tok-{TOKEN_TAG}", track=procs.track, env=env,
            global_args=["--log-format", fmt],
        ) as computer:  # fmt: skip
            tools = await eventually(
                lambda: {t.name for t in agent.tools.get("box", [])} >= {"search", "sse_search"},
                what="tools of both HTTP servers",
            )
            assert tools
            for tool in ("search", "sse_search"):
                result = await agent.call_tool("box", tool, {}, timeout=30)
                assert not result.is_error and result_text(result) == "http:search"
            await computer.wait_for_log("MCP server broken failed")
            await computer.wait_for_log("tool call sse_search")
            logs = computer.logs()
    assert "HTTP Request" in logs or "httpx" not in logs  # -v shows httpx, redacted
    for tag in (*TAGS.values(), TOKEN_TAG):
        assert tag not in logs, f"secret tag {tag} leaked:\n" + "\n".join(
            line for line in logs.splitlines() if tag in line
        )
    if fmt == "json":
        records = [json.loads(line) for line in logs.splitlines() if line.startswith('{"time"')]
        calls = [r for r in records if r["logger"] == "a2c_computer.calls"]
        assert calls and calls[0]["agent"] == "planner" and calls[0]["outcome"] == "ok"
        assert {"tool", "mcp_server", "duration_s"} <= calls[0].keys()
