"""Explicit bundle_ids on our Computer, through real processes.

``a2c-server`` and ``a2c-computer run`` as processes, MCP servers as subprocesses, the Agent
library in-process. Two MCP servers share the display name ``Files``; their explicit
bundle_ids key them. In a 0.4 session (Computer pinned to 0.4) an Agent sees and addresses
them by bundle_id: directly (our Agent on 0.4), or through the Server's translation (our
Agent on 0.2, which sees the bundle_ids as server names: no reverse map needed). A Computer
on 0.2 shows the same config as before the bundle_id was written.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import (
    AsyncAgent,
    CapabilityNotSupportedError,
    McpServerNotFoundError,
    SkillNotFoundError,
)
from a2c_computer._config import load_config
from a2c_protocol import to_wire
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.processes import ManagedProcess
from a2c_testkit.triangle import computer_process, eventually, server_process

AUTO = {"auto_apply": True}
FILES_A = stdio_server_config("Files", "desk", bundle_id="files-a", default_tool_meta=AUTO)
FILES_B = stdio_server_config(
    "Files", "plain", bundle_id="files-b", default_tool_meta=AUTO,
    tool_meta={"echo": {"alias": "say"}},  # desk has an ``echo`` too
)  # fmt: skip


def write(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"servers": servers}, indent=2), encoding="utf-8")
    return path


@contextlib.asynccontextmanager
async def office(
    procs: Any, config: Path, *, agent_line: str, computer_args: list[str]
) -> AsyncIterator[tuple[AsyncAgent, ManagedProcess]]:
    room = f"office-{uuid.uuid4()}"
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        AsyncAgent(server.url, name="planner", protocol=agent_line) as agent,  # type: ignore[arg-type]
    ):  # fmt: skip
        await agent.join_office(room)
        async with computer_process(
            procs.log_dir, config=config, server_url=server.url, office=room, name="box",
            track=procs.track, extra_args=computer_args,
        ) as computer:  # fmt: skip
            yield agent, computer


@pytest.mark.parametrize("agent_line", ["0.4", "0.2"])
async def test_a_0_4_session_names_each_server_by_its_bundle_id(
    procs: Any, tmp_path: Path, agent_line: str
) -> None:
    config = write(tmp_path / "computer.json", {"files-a": FILES_A, "files-b": FILES_B})
    async with office(
        procs, config, agent_line=agent_line, computer_args=["--protocol", "0.4"]
    ) as (agent, computer):
        await computer.wait_for_log("(protocol 0.4.2)", timeout=120)

        async def both_listed() -> Any:
            names = {t.name for t in await agent.get_tools("box")}
            return names if {"files-a__echo", "files-b__say"} <= names else None

        names = await eventually(both_listed, timeout=120, what="both bundles listed")
        assert all(n.split("__", 1)[0] in ("files-a", "files-b") for n in names), names
        said = await agent.call_tool("box", "files-b__say", {"text": "hi"}, timeout=60)
        assert not said.is_error and said.content[0]["text"] == "plain:echo:hi"
        echoed = await agent.call_tool("box", "files-a__echo", {"text": "yo"}, timeout=60)
        assert not echoed.is_error and echoed.content[0]["text"] == "yo"
        # The display name is no bundle: an unknown tool.
        wrong = await agent.call_tool("box", "Files__echo", {"text": "x"}, timeout=60)
        assert wrong.is_error and (wrong.meta or {}).get("error_code") == 4001

        view = await agent.get_config("box")
        assert sorted(view.servers) == ["files-a", "files-b"]
        assert {s.name for s in view.servers.values()} == {"Files"}
        assert view.server_states is not None and sorted(view.server_states) == sorted(view.servers)

        page = await agent.get_resources("box", "files-a")
        assert page.resources, "the desk server lists windows"
        with pytest.raises(McpServerNotFoundError) as missing:
            await agent.get_resources("box", "Files")
        assert missing.value.mcp_server_name == "Files"
        with pytest.raises(CapabilityNotSupportedError) as lacking:
            await agent.get_resources("box", "files-b")  # plain has no resources
        assert lacking.value.mcp_server_name == "files-b"


async def test_a_0_2_session_shows_what_it_showed_before_the_bundle_id(
    procs: Any, tmp_path: Path
) -> None:
    desk = stdio_server_config("desk", "desk", default_tool_meta=AUTO)
    config = write(tmp_path / "computer.json", {"desk": {**desk, "bundle_id": "desk-v2"}})
    async with office(procs, config, agent_line="0.2", computer_args=[]) as (agent, computer):
        await computer.wait_for_log("(protocol 0.2.3)", timeout=120)
        tools = await eventually(lambda: agent.get_tools("box"), timeout=120, what="tools")
        assert "echo" in {t.name for t in tools}
        assert not any("__" in t.name for t in tools)
        view = await agent.get_config("box")
        before = load_config({"servers": {"desk": desk}}).servers["desk"]
        assert to_wire(view.servers["desk"]) == to_wire(before)
        page = await agent.get_resources("box", "desk")
        assert page.resources


async def test_0_4_skill_names_carry_the_bundle_id(procs: Any, tmp_path: Path) -> None:
    # Keyed by its name: 0.2 calls its skills mcp:doc_tools_v2:<skill>, 0.4 mcp:docs-1:<skill>.
    docs = stdio_server_config("doc tools.v2", "skills", bundle_id="docs-1", default_tool_meta=AUTO)
    config = write(tmp_path / "computer.json", {"doc tools.v2": docs})
    args = ["--protocol", "0.4", "--skills-install-dir", str(tmp_path / "install")]
    async with office(procs, config, agent_line="0.4", computer_args=args) as (agent, computer):
        await computer.wait_for_log("(protocol 0.4.2)", timeout=120)

        async def listed() -> Any:
            skills = await agent.get_skills("box")
            return skills if any(s.name == "mcp:docs-1:inline-guide" for s in skills) else None

        skills = await eventually(listed, timeout=120, what="the MCP server's skill listed")
        guide = next(s for s in skills if s.name == "mcp:docs-1:inline-guide")
        assert guide.source == "mcp:docs-1"
        read = await agent.get_skill("box", guide.name)
        assert read.name == guide.name and "inline" in read.text().lower()
        with pytest.raises(SkillNotFoundError) as missing:
            await agent.get_skill("box", "mcp:doc_tools_v2:inline-guide")
        assert missing.value.name == "mcp:doc_tools_v2:inline-guide"
