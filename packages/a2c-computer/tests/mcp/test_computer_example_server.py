"""The example desk MCP server shipped in a2c_computer.examples (used by the demo)."""

from __future__ import annotations

import sys
from typing import Any

from a2c_computer import Computer, SkillSettings
from a2c_protocol import Event


def example(tick: float = 60.0) -> dict[str, Any]:
    return {
        "servers": {
            "desk": {
                "type": "stdio",
                "name": "desk",
                "default_tool_meta": {"auto_apply": True},
                "server_parameters": {
                    "command": sys.executable,
                    "args": ["-m", "a2c_computer.examples.desk_server", "--tick", str(tick)],
                },
            }
        }
    }


async def test_example_tools_and_windows_change_over_time(recorder: Any) -> None:
    async with Computer(example(), name="box") as computer:
        computer.add_update_listener(recorder)
        assert {t.name for t in computer.tools()} == {
            "note_add",
            "notes_clear",
            "panel_open",
            "panel_close",
            "roll_dice",
            "wait",
        }
        desktop = await computer.desktop()
        assert [d.split("\n")[0] for d in desktop] == [
            "window://org.a2c.example.desk/notes",
            "window://org.a2c.example.desk/clock",
        ]
        assert "(no notes)" in desktop[0]
        await computer.call_tool("note_add", {"text": "buy milk"})
        await recorder.wait_count(
            Event.UPDATE_DESKTOP, 1
        )  # resources/updated for a subscribed window
        assert "- buy milk" in (await computer.desktop())[0]
        await computer.call_tool("panel_open", {"name": "build log", "text": "all green"})
        await recorder.wait_count(Event.UPDATE_DESKTOP, 2)  # list_changed with a new window
        panels = [d for d in await computer.desktop() if "/panel/" in d]
        assert panels == ["window://org.a2c.example.desk/panel/build%20log\n\nall green"]


async def test_example_clock_ticks_send_updates(recorder: Any) -> None:
    async with Computer(example(tick=0.2), name="box") as computer:
        computer.add_update_listener(recorder)
        await recorder.wait_count(Event.UPDATE_DESKTOP, 2)


async def test_example_publishes_one_skill_in_resources_mode(tmp_path: Any) -> None:
    settings = SkillSettings(install_dir=tmp_path / "staged", user_dir=None)
    async with Computer(example(), name="box", skills=settings) as computer:
        (ref,) = computer.skills.skills()
        assert (ref.name, ref.source, ref.version) == ("mcp:desk:desk-notes", "mcp:desk", "1.0.0")
        assert ref.allowed_tools == ["note_add", "notes_clear"]
        md = await computer.skills.read("mcp:desk:desk-notes", None, "r")
        assert md.body is not None and md.body.startswith("# Desk notes")
        tools = await computer.skills.read("mcp:desk:desk-notes", "references/tools.md", "r")
        assert tools.body is not None and "note_add" in tools.body
