"""The REAL official 0.4.2 Agent with our Computer whose servers have explicit bundle_ids.

Our ``a2c-server`` and ``a2c-computer run --protocol 0.4`` as processes, the official Agent
in its throwaway venv (:mod:`a2c_testkit.official`) running
``interop/official_agent_bundles.py``. Two MCP servers share the display name ``Files``:
the official Agent sees two bundles, calls into one, reads the config keyed by bundle_id
and asks resources by bundle_id.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.official import official_venv, run_official
from a2c_testkit.triangle import computer_process, server_process

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "interop" / "official_agent_bundles.py"


async def test_the_official_0_4_agent_addresses_our_servers_by_bundle_id(
    procs: Any, tmp_path: Path
) -> None:
    servers = {
        "files-a": stdio_server_config("Files", "desk", bundle_id="files-a"),
        "files-b": stdio_server_config(
            "Files", "plain", bundle_id="files-b", tool_meta={"echo": {"alias": "say"}}
        ),
    }
    config = tmp_path / "computer.json"
    config.write_text(json.dumps({"servers": servers}), encoding="utf-8")
    room = f"bundles-{uuid.uuid4().hex[:8]}"
    python = await asyncio.to_thread(official_venv, "0.4.2")
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config, server_url=server.url, office=room,
                         name="our-box", confirm="allow", track=procs.track,
                         extra_args=["--protocol", "0.4"]) as computer,
    ):  # fmt: skip
        await computer.wait_for_log("(protocol 0.4.2)", timeout=120)
        run = await asyncio.to_thread(
            run_official, python, SCRIPT, server.url, room, "official-agent", "our-box",
            "files-a", timeout=240,
        )  # fmt: skip
    out: dict[str, Any] = json.loads(run.check().strip().splitlines()[-1])
    tools = {t["name"]: t["bundle_id"] for t in out["tools"]}
    assert tools["files-a__echo"] == "files-a" and tools["files-b__say"] == "files-b", tools
    assert all(name.startswith(f"{bundle}__") for name, bundle in tools.items())
    assert out["call"]["isError"] is False
    assert out["call"]["content"][0]["text"] == "hello"
    shown = out["config"]["servers"]
    assert {k: (v["bundle_id"], v["name"]) for k, v in shown.items()} == {
        "files-a": ("files-a", "Files"), "files-b": ("files-b", "Files"),
    }  # fmt: skip
    assert out["resources"]["resources"], "the desk server lists windows"
    assert out["by_name"]["code"] == 4014
    assert out["by_name"]["payload"]["mcp_server"] == "Files"
