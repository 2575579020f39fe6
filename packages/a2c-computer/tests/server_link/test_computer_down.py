"""Which down MCP server a tool name belongs to, and what the config view says about it."""

from __future__ import annotations

import attrs

from a2c_computer._config import states_view
from a2c_computer._observe._logging import register_secret
from a2c_computer._toolcalls._down import down_note, down_owner, down_result
from a2c_protocol import config_from_json

CONFIG = config_from_json(
    {
        "servers": {
            "web": {
                "type": "sse",
                "name": "web",
                "tool_prefix": "web_",
                "server_parameters": {"url": "http://127.0.0.1:9/sse"},
            },
            "git": {
                "type": "stdio",
                "name": "git",
                "tool_meta": {"log": {"alias": "history"}},
                "server_parameters": {"command": "git-mcp"},
            },
        }
    },
)


def test_a_remembered_name_an_alias_or_a_prefix_names_the_down_server() -> None:
    down = {"web": "refused", "git": "exited"}
    listed = {"git": frozenset({"status"})}
    assert down_owner("status", down, listed, CONFIG.servers) == "git"
    assert down_owner("history", down, {}, CONFIG.servers) == "git"  # never listed: alias
    assert down_owner("web_fetch", down, {}, CONFIG.servers) == "web"  # never listed: prefix
    assert down_owner("other", down, listed, CONFIG.servers) is None
    assert down_owner("status", {"web": "refused"}, listed, CONFIG.servers) is None


def test_the_answer_is_4014_naming_the_server_and_its_reason() -> None:
    result = down_result("history", "git", "exited with 1")
    assert result.is_error and result.meta is not None
    assert result.meta["error_code"] == 4014
    assert (result.meta["mcp_server"], result.meta["mcp_server_name"]) == ("git", "git")
    assert result.meta["reason"] == "mcp_server_down"
    assert "exited with 1" in result.content[0]["text"]
    assert down_note({}) == ""
    assert "'git', 'web' are down" in down_note({"web": None, "git": None})


@attrs.frozen
class _State:
    status: str
    last_error: str | None
    tools: int
    protocol: str | None = None


def test_states_view_masks_secrets_and_omits_the_error_of_a_ready_server() -> None:
    register_secret("s3cr3t-value-xyz")
    view = states_view(
        {
            "web": _State("failed", "connect to http://u:s3cr3t-value-xyz@h/sse?k=1 failed", 0),
            "git": _State("ready", "old error", 3),
            "new": _State("ready", None, 1, "2026-07-28"),
            "off": _State("failed", "gone", 0, "2025-11-25"),
        }
    )
    assert view["git"] == {"status": "ready", "tools": 3}
    # the MCP protocol version its session speaks, when it is ready
    assert view["new"] == {"status": "ready", "tools": 1, "protocol": "2026-07-28"}
    assert "protocol" not in view["off"]
    assert view["web"]["status"] == "failed"
    assert "s3cr3t-value-xyz" not in view["web"]["error"]
