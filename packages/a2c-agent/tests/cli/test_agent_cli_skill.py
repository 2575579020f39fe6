"""``a2c-agent skills`` / ``skill`` as a real subprocess against the real Server, and the
binary-to-terminal refusal."""

from __future__ import annotations

import argparse
import io
import json
from typing import Any

import pytest

from a2c_agent._cli._render import render_table
from a2c_agent._cli._skill import BinaryToTerminalError, skill_command
from a2c_agent._skills import SkillFile
from a2c_testkit.scripted_skills import PNG, SKILLS, script_skills

from .test_agent_cli import run_cli


async def test_skills_and_skill_commands(make_computer, server, tmp_path):
    computer = await make_computer()
    script_skills(computer, SKILLS)

    code, out, _ = await run_cli(server.url, "skills", "box-1")
    assert code == 0 and [s["name"] for s in json.loads(out)] == [s["name"] for s in SKILLS]

    code, out, _ = await run_cli(server.url, "skill", "box-1", "mcp:doc_tools:pdf-fill")
    assert code == 0 and out == "# mcp:doc_tools:pdf-fill\n"

    target = tmp_path / "a.png"
    code, out, _ = await run_cli(
        server.url, "skill", "box-1", "log-triage", "assets/a.png", "-o", str(target)
    )
    assert code == 0 and target.read_bytes() == PNG and json.loads(out)["size"] == len(PNG)

    code, out, err = await run_cli(server.url, "skill", "box-1", "nope")
    assert code == 1 and out == "" and "4014" in err


def test_skills_table_shows_missing_values_as_dashes():
    text = render_table("skills", SKILLS)
    lines = text.splitlines()
    assert lines[0].split() == ["NAME", "SOURCE", "VERSION", "DESCRIPTION"]
    assert lines[2].split() == ["log-triage", "user", "-", "d"]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _FakeAgent:
    def __init__(self, skill: SkillFile) -> None:
        self.skill = skill

    async def get_skill(self, computer: str, name: str, rel_path: str) -> SkillFile:
        return self.skill


def _args(**kw: Any) -> argparse.Namespace:
    base = {"computer": "box-1", "name": "x", "rel_path": "a.png", "file": None, "output": None}
    return argparse.Namespace(**{**base, **kw})


async def test_binary_is_never_printed_to_a_terminal():
    png = SkillFile(name="x", rel_path="a.png", mime_type="image/png", sha256="s", data=PNG)
    with pytest.raises(BinaryToTerminalError, match="-o FILE"):
        await skill_command(_FakeAgent(png), _args(), _Tty())  # type: ignore[arg-type]
    # Text that is not UTF-8 counts as binary too.
    odd = SkillFile(name="x", rel_path="n.txt", mime_type="text/plain", sha256="s", data=b"\xff")
    with pytest.raises(BinaryToTerminalError):
        await skill_command(_FakeAgent(odd), _args(rel_path="n.txt"), _Tty())  # type: ignore[arg-type]
