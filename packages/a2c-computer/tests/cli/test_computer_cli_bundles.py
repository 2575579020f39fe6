"""``a2c-computer check`` and explicit bundle_ids: a bad or duplicate one fails the load with
the config path and the rule; a good one is shown next to the server it names."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from a2c_testkit.mcp_servers import stdio_server_config


def write(tmp_path: Path, servers: dict[str, Any]) -> str:
    path = tmp_path / "computer.json"
    path.write_text(json.dumps({"servers": servers}), encoding="utf-8")
    return str(path)


async def check(config: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_computer._cli", "check", "--config", config,
        "--timeout", "60",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 180)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_a_bad_bundle_id_fails_the_load(tmp_path: Path) -> None:
    config = write(tmp_path, {"desk": stdio_server_config("desk", "plain", bundle_id="a__b")})
    code, _, err = await check(config)
    assert code == 2
    assert "$.servers['desk'].bundle_id: 'a__b' must not contain '__'" in err


async def test_duplicate_bundle_ids_fail_the_load(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        {
            "one": stdio_server_config("Files", "plain", bundle_id="one"),
            "Files": stdio_server_config("Files", "plain", bundle_id="one"),
        },
    )
    code, _, err = await check(config)
    assert code == 2
    assert "$.servers['Files']: its bundle_id 'one' is also server 'one''s" in err


async def test_check_shows_what_a_0_4_session_calls_each_server(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        {
            "files-a": stdio_server_config("Files", "plain", bundle_id="files-a"),
            "files-b": stdio_server_config("Files", "plain", bundle_id="files-b",
                                           tool_prefix="b_"),
            "my server": stdio_server_config("my server", "plain", tool_prefix="m_"),
        },
    )  # fmt: skip
    code, out, err = await check(config)
    assert code == 0, out + err
    assert "MCP server files-a: ready (name 'Files')" in out
    assert "MCP server files-b: ready (name 'Files')" in out
    assert "MCP server my server: ready (0.4 bundle_id my-server)" in out
