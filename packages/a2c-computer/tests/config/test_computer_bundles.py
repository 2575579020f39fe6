"""0.4 bundles on our Computer: one bundle_id per MCP server, explicit or derived,
checked at load, and what 0.2 and 0.4 sessions show of it (pure parts)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2c_computer._bundles import (
    Bundles,
    bundle_id_of,
    config_for_02,
    tool_name_from_04,
    tools_for_04,
)
from a2c_computer._config import agent_view, load_config
from a2c_computer._exceptions import ConfigError
from a2c_computer._server_link._line04 import Session04
from a2c_protocol import Event, to_wire

SERVERS = {"echo": "desk", "search": "my server", "x__y": "a__b"}


def entry(name: str, **fields: Any) -> dict[str, Any]:
    return {"type": "stdio", "name": name, "server_parameters": {"command": "x"}, **fields}


def test_bundles_are_valid_ids_named_after_their_server() -> None:
    assert bundle_id_of("desk") == "desk"
    assert bundle_id_of("my server") == "my-server"
    assert bundle_id_of("a__b") == "a_b" and bundle_id_of("a___b") == "a_b"
    assert bundle_id_of("") == "server"


def test_tools_round_trip_and_foreign_bundles_stay_unknown() -> None:
    bundles = Bundles.of(load_config({"servers": {s: entry(s) for s in set(SERVERS.values())}}))
    tools = [{"name": n, "description": "d"} for n in SERVERS] + [{"name": "orphan"}]
    shown = tools_for_04(tools, SERVERS.get, bundles)
    assert [(t["name"], t.get("bundle_id")) for t in shown] == [
        ("desk__echo", "desk"), ("my-server__search", "my-server"), ("a_b__x__y", "a_b"),
        ("orphan", None),
    ]  # fmt: skip
    for tool, original in zip(shown, SERVERS, strict=False):
        assert tool_name_from_04(tool["name"], SERVERS.get, bundles) == original
    assert tool_name_from_04("other__echo", SERVERS.get, bundles) == "other__echo"  # -> 4001
    assert tool_name_from_04("echo", SERVERS.get, bundles) == "echo"


# ------------------------------------------------------------------ the config rules

TWO_FILES = {
    "servers": {
        "files-a": entry("Files", bundle_id="files-a"),
        "files-b": entry("Files", bundle_id="files-b"),
        "desk": entry("desk", bundle_id="desk-v2"),
        "my server": entry("my server"),
    }
}


def test_an_explicit_bundle_id_wins_and_names_may_repeat() -> None:
    bundles = Bundles.of(load_config(TWO_FILES))
    assert dict(bundles.by_server) == {
        "files-a": "files-a", "files-b": "files-b", "desk": "desk-v2", "my server": "my-server",
    }  # fmt: skip
    assert bundles.server("desk-v2") == "desk" and bundles.server("desk") is None


@pytest.mark.parametrize(
    ("bundle_id", "problem"),
    [
        ("", "non-empty"),
        ("a.b", "A-Z a-z 0-9 _ -"),
        ("café", "A-Z a-z 0-9 _ -"),
        ("a__b", "must not contain '__'"),
        (7, "expected string"),
    ],
)
def test_a_bad_bundle_id_is_refused_at_load(bundle_id: Any, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"servers": {"desk": entry("desk", bundle_id=bundle_id)}})
    assert "$.servers['desk'].bundle_id" in str(caught.value)
    assert problem in str(caught.value)


def test_the_key_is_the_name_or_the_bundle_id() -> None:
    load_config({"servers": {"desk": entry("desk", bundle_id="d2")}})
    load_config({"servers": {"d2": entry("desk", bundle_id="d2")}})
    with pytest.raises(ConfigError, match="the key must be the name 'desk' or the bundle_id"):
        load_config({"servers": {"other": entry("desk", bundle_id="d2")}})
    with pytest.raises(ConfigError, match="must equal its key"):
        load_config({"servers": {"other": entry("desk")}})


@pytest.mark.parametrize(
    ("servers", "said"),
    [
        (
            {"a": entry("a", bundle_id="same"), "b": entry("b", bundle_id="same")},
            "$.servers['b']: its bundle_id 'same' is also server 'a''s",
        ),
        (
            {"my-server": entry("my-server"), "my server": entry("my server")},
            "$.servers['my server']: the bundle_id derived from its name 'my-server' is also",
        ),
        (
            {"desk": entry("desk"), "Desk": entry("Desk", bundle_id="desk")},
            "$.servers['Desk']: its bundle_id 'desk' is also server 'desk''s",
        ),
    ],
)
def test_duplicate_bundle_ids_are_a_config_error(servers: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"servers": servers})
    assert said in str(caught.value)
    assert "give one of them an explicit, different bundle_id" in str(caught.value)


# --------------------------------------------------------------- what each line sees


def test_a_0_2_view_is_unchanged_without_explicit_bundle_ids() -> None:
    plain = agent_view(to_wire(load_config({"servers": {"desk": entry("desk")}})))
    assert config_for_02(plain) is plain
    view = agent_view(to_wire(load_config(TWO_FILES)))
    shown = config_for_02(view)["servers"]
    # 0.2 names a server by its key, and has no bundle_id.
    assert {k: v["name"] for k, v in shown.items()} == {k: k for k in TWO_FILES["servers"]}
    assert not any("bundle_id" in v for v in shown.values())
    assert json.dumps(shown["my server"]) == json.dumps(view["servers"]["my server"])


def session() -> Session04:
    owners = {"read": "files-a", "echo": "desk", "search": "my server"}
    return Session04(Bundles.of(load_config(TWO_FILES)), owners.get)


def test_a_0_4_session_names_servers_by_bundle_id() -> None:
    s = session()
    config = agent_view(to_wire(load_config(TWO_FILES)))
    states = {k: {"status": "ready", "tools": 1} for k in config["servers"]}
    shown = s.answer(Event.GET_CONFIG, {**config, "a2c_server_states": states}, {})
    assert list(shown["servers"]) == ["files-a", "files-b", "desk-v2", "my-server"]
    assert {k: (v["bundle_id"], v["name"]) for k, v in shown["servers"].items()} == {
        "files-a": ("files-a", "Files"), "files-b": ("files-b", "Files"),
        "desk-v2": ("desk-v2", "desk"), "my-server": ("my-server", "my server"),
    }  # fmt: skip
    assert list(shown["a2c_server_states"]) == list(shown["servers"])
    tools = s.answer(Event.GET_TOOLS, {"tools": [{"name": "echo", "meta": {
        "a2c_mcp_server": "desk"}}]}, {})["tools"]  # fmt: skip
    assert tools == [
        {"name": "desk-v2__echo", "bundle_id": "desk-v2", "meta": {"a2c_mcp_server": "desk-v2"}}
    ]
    assert s.request(Event.TOOL_CALL, {"tool_name": "desk-v2__echo"}) == (
        {"tool_name": "echo"}, None,
    )  # fmt: skip
    assert s.request(Event.TOOL_CALL, {"tool_name": "desk__echo"})[0] == {"tool_name": "desk__echo"}
    down = {"isError": True, "meta": {"mcp_server": "desk", "mcp_server_name": "desk"}}
    assert s.answer(Event.TOOL_CALL, down, {})["meta"] == {
        "mcp_server": "desk-v2", "mcp_server_name": "desk-v2",
    }  # fmt: skip


def test_0_4_resources_are_asked_by_bundle_id() -> None:
    s = session()
    assert s.request(Event.GET_RESOURCES, {"mcp_server": "desk-v2"}) == (
        {"mcp_server": "desk"}, None,
    )  # fmt: skip
    # The key of a server is not its bundle_id: unknown, answered at once in 0.4 spelling.
    ours, at_once = s.request(Event.GET_RESOURCES, {"mcp_server": "desk"})
    assert ours is None
    assert at_once["code"] == 4014 and at_once["mcp_server"] == "desk"
    assert "mcp_server_name" not in at_once
    missing = {"code": 4015, "message": "m", "mcp_server_name": "desk", "capability": "resources"}
    answer = s.answer(Event.GET_RESOURCES, missing, {"mcp_server": "desk-v2"})
    assert answer == {"code": 4015, "message": "m", "mcp_server": "desk-v2",
                      "capability": "resources"}  # fmt: skip


def test_0_4_skill_names_carry_the_bundle_id() -> None:
    s = session()
    listed = {"skills": [
        {"name": "mcp:my_server:guide", "source": "mcp:my_server"},
        {"name": "mcp:desk:howto", "source": "mcp:desk"},
        {"name": "mine", "source": "user"},
    ]}  # fmt: skip
    shown = s.answer(Event.GET_SKILLS, listed, {})["skills"]
    assert [(k["name"], k["source"]) for k in shown] == [
        ("mcp:my-server:guide", "mcp:my-server"), ("mcp:desk-v2:howto", "mcp:desk-v2"),
        ("mine", "user"),
    ]  # fmt: skip
    assert s.request(Event.GET_SKILL, {"name": "mcp:desk-v2:howto"})[0] == {
        "name": "mcp:desk:howto"
    }
    ours, at_once = s.request(Event.GET_SKILL, {"name": "mcp:desk:howto"})
    assert ours is None and at_once["code"] == 4014
    assert at_once["details"]["name"] == "mcp:desk:howto"
    asked = {"name": "mcp:desk-v2:howto"}
    assert s.answer(Event.GET_SKILL, {"name": "mcp:desk:howto", "body": "b"}, asked)["name"] == (
        "mcp:desk-v2:howto"
    )


async def test_a_changed_bundle_id_announces_a_new_tool_list() -> None:
    # 0.4 tool names change with it, though our own (0.2) tool list does not.
    from a2c_computer._computer import ComputerCore

    core = ComputerCore({"servers": {"desk": entry("desk")}})
    heard: list[Event] = []
    core.add_update_listener(heard.append)
    await core.update_config({"servers": {"desk": entry("desk", bundle_id="desk-v2")}})
    assert Event.UPDATE_TOOL_LIST in heard
    heard.clear()
    await core.update_config({"servers": {"desk": entry("desk", bundle_id="desk-v2")}})
    assert heard == []
