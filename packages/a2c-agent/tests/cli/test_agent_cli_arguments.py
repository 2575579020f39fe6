"""``a2c-agent call`` without JSON: ``{}`` for a tool that takes no
arguments, the schema's own requirement for one that needs some; real CLI, real Server."""

from __future__ import annotations

import json

import attrs

from a2c_agent._cli._arguments import missing_arguments_problem, required_arguments
from a2c_agent._types import AgentTool
from a2c_protocol import CallToolResult, Event
from a2c_testkit.scripted_computer import scripted_tool

from .test_agent_cli import run_cli

NEEDS_TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def _tool(name: str, schema: dict[str, object]) -> AgentTool:
    return AgentTool(computer="box", name=name, description="", params_schema=schema,
                     return_schema=None, meta={}, tool_meta=None)  # fmt: skip


def test_required_arguments_reads_only_the_top_level_list_of_names() -> None:
    assert required_arguments(NEEDS_TEXT) == ["text"]
    assert required_arguments({"type": "object"}) == []
    assert required_arguments({"required": "text"}) == []  # not a list: nothing required
    assert required_arguments({"required": ["a", 3, "b"]}) == ["a", "b"]
    assert required_arguments(None) == []


def test_the_problem_names_the_arguments_and_how_to_pass_them() -> None:
    tools = [_tool("echo", NEEDS_TEXT), _tool("notes_clear", {"type": "object"})]
    problem = missing_arguments_problem("box", "echo", tools)
    assert problem is not None
    assert "its input schema requires text" in problem
    assert """a2c-agent call box echo '{"text": "..."}'""" in problem
    assert missing_arguments_problem("box", "notes_clear", tools) is None
    # Not listed: the Computer's own "not found, did you mean" answers it.
    assert missing_arguments_problem("box", "ecko", tools) is None


async def test_a_tool_without_arguments_is_called_without_json(make_computer, server):
    computer = await make_computer()
    computer.tools = [
        scripted_tool("notes_clear"),
        attrs.evolve(scripted_tool("echo"), params_schema=NEEDS_TEXT),
    ]
    computer.tool_results["notes_clear"] = CallToolResult(
        content=[{"type": "text", "text": "cleared"}]
    )

    code, out, err = await run_cli(server.url, "call", "box-1", "notes_clear")
    assert code == 0, err
    assert json.loads(out)["content"] == [{"type": "text", "text": "cleared"}]
    (sent,) = computer.received(Event.TOOL_CALL)
    assert sent["tool_name"] == "notes_clear" and sent["params"] == {}

    code, out, err = await run_cli(server.url, "call", "box-1", "echo")
    assert code == 2 and out == ""
    assert "tool 'echo' of 'box-1' needs arguments: its input schema requires text" in err
    assert "usage:" not in err  # one line that says it, not the whole usage block
    assert len(computer.received(Event.TOOL_CALL)) == 1  # echo was never called
