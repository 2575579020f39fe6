"""Skills papercuts, through a real Computer and a real skills MCP server:
a user skill's frontmatter ``version`` reaches its ref, and a normal stop does not log that
an MCP server "is down" (a server that really dies still does)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from a2c_computer import Computer, SkillSettings
from a2c_computer._skills._frontmatter import parse_skill_md
from a2c_testkit.mcp_servers import stdio_server_config

DOWN = "is down: its skills are hidden"


async def until(check: Any, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.05)


def test_frontmatter_version_forms() -> None:
    def version(front: str) -> str | None:
        text = f"---\nname: x\ndescription: d\n{front}---\nbody\n"
        return parse_skill_md(text.encode())[0].version

    assert version("version: 1.2.0\n") == "1.2.0"
    assert version("version: 2\n") == "2"
    assert version("metadata:\n  version: '0.3'\n") == "0.3"
    assert version("") is None
    assert version("version: [1]\n") is None


async def test_user_skill_version_and_a_quiet_normal_stop(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    user = tmp_path / "user" / "log-triage"
    user.mkdir(parents=True)
    (user / "SKILL.md").write_text(
        "---\nname: log-triage\ndescription: Triage logs.\nversion: 1.4.2\n---\n# triage\n"
    )
    settings = SkillSettings(install_dir=tmp_path / "install", user_dir=tmp_path / "user")
    config = {"servers": {"doc_tools": stdio_server_config("doc_tools", "skills")}}
    caplog.set_level(logging.INFO, logger="a2c_computer")

    async with Computer(config, name="box", skills=settings) as computer:
        await until(lambda: len(computer.skills.skills()) > 1)
        refs = {s.name: s for s in computer.skills.skills()}
        assert refs["log-triage"].version == "1.4.2"

        # A server that really dies is news: one INFO line.
        pid = int((await computer.call_tool("pid", {})).content[0]["text"])
        os.kill(pid, signal.SIGKILL)
        await until(lambda: any(DOWN in r.getMessage() for r in caplog.records))
        await until(lambda: len(computer.skills.skills()) > 1)  # restarted
        caplog.clear()
    assert not [r.getMessage() for r in caplog.records if DOWN in r.getMessage()]
