"""``a2c-agent`` tables lose nothing: every content kind, '-' for missing values, the
owning MCP server of each tool, and rows that fit the terminal."""

from __future__ import annotations

import base64
import io

import pytest

from a2c_agent._cli import _files as _cli_files
from a2c_agent._cli._files import ProgressBar
from a2c_agent._cli._render import content_lines, render_table, table

PNG = base64.b64encode(b"\x89PNG" + b"\0" * 2044).decode()  # 2048 bytes


def test_every_content_kind_is_shown():
    result = {
        "content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "audio", "data": base64.b64encode(b"abc").decode(), "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///tmp/a.txt", "name": "a.txt"},
            {"type": "resource", "resource": {"uri": "mem://x", "mimeType": "text/plain",
                                               "text": "inline"}},
            {"type": "resource", "resource": {"uri": "mem://y", "blob": PNG}},
        ],
        "isError": False,
    }  # fmt: skip
    text = render_table("call", result)
    lines = text.splitlines()
    assert lines[0] == "hello"
    assert "[image image/png, 2.0 KiB]" in lines
    assert "[audio audio/wav, 3 B]" in lines
    assert "[resource_link file:///tmp/a.txt (a.txt)]" in lines
    assert "[resource mem://x text/plain]" in lines and "inline" in lines
    assert "[resource mem://y -, 2.0 KiB]" in lines
    assert content_lines({"type": "future_kind", "x": 1})[0].startswith("[future_kind content]")
    assert render_table("call", {"content": [], "isError": False}) == "(no content)"


def test_missing_values_print_a_dash():
    resources = {"resources": [{"uri": "window://h/1", "name": "w"}]}
    row = render_table("resources", resources).splitlines()[2].split()
    assert row == ["window://h/1", "w", "-", "-"]  # no mime type, no priority (not 0.00)
    tools = [{"name": "t", "description": "", "meta": {}, "tool_meta": None}]
    assert render_table("tools", tools).splitlines()[2].split() == ["t", "-", "-", "-", "-"]


def test_tools_show_their_mcp_server():
    tools = [
        {"name": "a", "description": "d", "meta": {"a2c_mcp_server": "fs"}, "tool_meta": None},
        {"name": "b", "description": "d", "meta": {}, "tool_meta": {"tags": ["x"]}},
    ]
    lines = render_table("tools", tools).splitlines()
    assert lines[0].split() == ["TOOL", "MCP", "SERVER", "AUTO_APPLY", "TAGS", "DESCRIPTION"]
    assert lines[2].split() == ["a", "fs", "-", "-", "d"]
    assert lines[3].split() == ["b", "-", "-", "x", "d"]


def test_tools_show_whether_they_run_without_confirmation():
    tools = [
        {"name": "a", "description": "d", "meta": {}, "tool_meta": {"auto_apply": True}},
        {"name": "b", "description": "d", "meta": {}, "tool_meta": {"auto_apply": False}},
    ]
    lines = render_table("tools", tools).splitlines()
    assert "AUTO_APPLY" in lines[0]
    assert lines[2].split() == ["a", "-", "yes", "-", "d"]
    assert lines[3].split() == ["b", "-", "no", "-", "d"]


def test_long_cells_wrap_to_the_width():
    description = "word " * 80  # 400 characters
    tools = [{"name": "tool", "description": description, "meta": {}, "tool_meta": None}]
    lines = render_table("tools", tools, width=60).splitlines()
    assert all(len(line) <= 60 for line in lines), lines
    assert len(lines) > 3  # wrapped onto continuation lines
    assert lines[-1].rstrip().endswith("…")  # cut after a few lines, and says so
    # Without a width nothing is cut.
    assert description.strip() in render_table("tools", tools)
    # A narrow table is unchanged.
    assert table(("A", "B"), [("x", "y")], width=60) == "A  B\n-  -\nx  y"


def test_names_never_break_only_descriptions_shrink():
    """A narrow terminal never breaks a tool name mid-word (``notes_clear`` /
    ``_everything`` cannot be copied back into ``a2c-agent call``)."""
    name, server = "notes_clear_everything_now", "notes-server-long"
    tools = [{"name": name, "description": "Clear every note of the current user. " * 3,
              "meta": {"a2c_mcp_server": server}, "tool_meta": None}]  # fmt: skip
    for width in (40, 60, 80):
        lines = render_table("tools", tools, width=width).splitlines()
        assert lines[2].split()[:2] == [name, server], (width, lines)
        assert sum(name in line for line in lines) == 1
        assert all(line.startswith(" ") for line in lines[3:]), lines  # only the description
    resources = {
        "resources": [
            {
                "uri": "window://org.example.long/path/of/a/window",
                "name": "a_long_window_name",
                "mimeType": "text/plain",
            }
        ]
    }
    lines = render_table("resources", resources, width=30).splitlines()
    assert lines[2].split()[:2] == ["window://org.example.long/path/of/a/window",
                                    "a_long_window_name"]  # fmt: skip


def test_config_table_has_a_status_column():
    config = {
        "servers": {
            "fs": {"type": "stdio", "name": "fs"},
            "web": {"type": "sse", "name": "web"},
            "old": {"type": "stdio", "name": "old", "disabled": True},
        }
    }
    tools = [
        {"name": "read", "meta": {"a2c_mcp_server": "fs"}},
        {"name": "write", "meta": {"a2c_mcp_server": "fs"}},
    ]
    lines = render_table("config", config, tools=tools).splitlines()
    assert lines[0].split() == ["SERVER", "TYPE", "STATUS"]
    assert lines[2].split() == ["fs", "stdio", "2", "tools"]
    assert lines[3].split() == ["web", "sse", "no", "tools"]  # failed, or lost every clash
    assert lines[4].split() == ["old", "stdio", "disabled"]
    # A Computer that does not name owners: only what the config says.
    unnamed = render_table("config", config, tools=[{"name": "read", "meta": {}}])
    assert unnamed.splitlines()[2].split() == ["fs", "stdio", "enabled"]


def test_config_table_names_the_mcp_protocol_a_ready_server_speaks():
    config = {
        "servers": {
            "fs": {"type": "stdio", "name": "fs"},
            "web": {"type": "streamable", "name": "web"},
            "bad": {"type": "stdio", "name": "bad"},
        },
        "a2c_server_states": {
            "fs": {"status": "ready", "tools": 1, "protocol": "2025-11-25"},
            "web": {"status": "ready", "tools": 0, "protocol": "2026-07-28"},
            "bad": {"status": "failed", "tools": 0, "error": "boom"},
        },
    }
    tools = [{"name": "read", "meta": {"a2c_mcp_server": "fs"}}]
    lines = render_table("config", config, tools=tools).splitlines()
    assert lines[2].split() == ["fs", "stdio", "1", "tool,", "MCP", "2025-11-25"]
    assert lines[3].split() == ["web", "streamable", "no", "tools,", "MCP", "2026-07-28"]
    assert lines[4].split() == ["bad", "stdio", "failed:", "boom"]


def test_agent_cli_progress_bar_draws_throttles_and_always_draws_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(_cli_files.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    bar = ProgressBar(out, width=10)
    bar.update(1_000_000, 4_000_000)
    assert out.getvalue() == "\r[##        ]  25.0%  1.0/4.0 MB"
    clock[0] += 0.05  # within a tenth of a second: not redrawn
    bar.update(2_000_000, 4_000_000)
    assert out.getvalue().count("\r") == 1
    clock[0] += 0.01  # the last update is drawn however soon it comes
    bar.update(4_000_000, 4_000_000)
    bar.finish()
    assert out.getvalue().endswith("\r[##########] 100.0%  4.0/4.0 MB\n")


def test_agent_cli_progress_bar_of_an_empty_blob_is_full() -> None:
    out = io.StringIO()
    bar = ProgressBar(out, width=4)
    bar.update(0, 0)
    assert out.getvalue() == "\r[####] 100.0%  0.0/0.0 MB"
