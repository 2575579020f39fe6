"""The 0.2 <-> 0.4 line translations: versions, and each relay point both ways."""

import copy

import pytest

from a2c_protocol._lines import (
    LEGACY_BUNDLE,
    accepted_ranges,
    line_of,
    nearest_line,
    needs_translation,
    parse_lines,
    translate_answer,
    translate_request,
)

TOOLS_04 = {
    "tools": [
        {
            "name": "wiki__search",
            "bundle_id": "wiki",
            "description": "d",
            "params_schema": {},
            "return_schema": None,
            "meta": None,
        }
    ],
    "req_id": "r1",
}
TOOLS_02 = {
    "tools": [{"name": "search", "description": "d", "params_schema": {}, "return_schema": None}],
    "req_id": "r1",
}
CONFIG_04 = {
    "servers": {"wiki": {"name": "Wiki!", "bundle_id": "wiki", "type": "stdio", "disabled": False}},
    "inputs": [
        {
            "id": "env",
            "type": "pickString",
            "description": "e",
            "options": [{"label": "Production", "value": "prod"}],
        },
        {"id": "p", "type": "promptString", "description": "p"},
    ],
}
CONFIG_02 = {"servers": {"wiki": {"name": "wiki", "type": "stdio", "disabled": False}},
             "inputs": [{"id": "env", "type": "pickString", "description": "e",
                         "options": ["dev", "prod"], "default": "dev"}]}  # fmt: skip


def test_lines_of_versions() -> None:
    assert line_of("0.2.3") == "0.2"
    assert line_of("0.4.999") == "0.4"
    assert line_of("0.3.0") is None
    assert line_of("1.0.0") is None
    assert line_of("0.4") is None
    assert parse_lines("0.4, 0.2,0.4") == ("0.2", "0.4")
    with pytest.raises(ValueError, match=r"0\.3"):
        parse_lines("0.3")
    assert accepted_ranges(["0.4", "0.2"]) == [
        {"min_supported": "0.2.0", "max_supported": "0.2.999"},
        {"min_supported": "0.4.0", "max_supported": "0.4.999"},
    ]
    assert nearest_line("0.3.1", ["0.2", "0.4"]) == "0.2"
    assert nearest_line("0.5.0", ["0.2", "0.4"]) == "0.4"
    assert nearest_line("junk", ["0.2", "0.4"]) == "0.4"
    assert nearest_line("0.1.0", ["0.4"]) == "0.4"


def test_same_line_is_untouched_and_identical() -> None:
    assert not needs_translation("0.2", "0.2")
    for agent in ("0.2", "0.4"):
        assert (
            translate_answer("client:get_tools", TOOLS_04, agent=agent, computer=agent) is TOOLS_04
        )
        req = {"tool_name": f"{LEGACY_BUNDLE}__x"}
        assert translate_request("client:tool_call", req, agent=agent, computer=agent) is req


def test_04_computer_seen_by_a_02_agent() -> None:
    before = copy.deepcopy((TOOLS_04, CONFIG_04))
    tools = translate_answer("client:get_tools", TOOLS_04, agent="0.2", computer="0.4")
    assert tools["tools"] == [{"name": "wiki__search", "description": "d", "params_schema": {},
                               "return_schema": None, "meta": None}]  # fmt: skip
    config = translate_answer("client:get_config", CONFIG_04, agent="0.2", computer="0.4")
    assert config["servers"] == {"wiki": {"name": "Wiki!", "type": "stdio", "disabled": False}}
    assert config["inputs"][0]["options"] == ["prod"]
    assert config["inputs"][1] == CONFIG_04["inputs"][1]
    # The 0.2 Agent calls the exposed name as is; the 0.4 Computer resolves it.
    req = {"tool_name": "wiki__search", "computer": "c"}
    assert translate_request("client:tool_call", req, agent="0.2", computer="0.4") is req
    error = {"code": 4015, "message": "m", "mcp_server": "wiki", "capability": "resources",
             "details": {"mcp_server": "wiki"}}  # fmt: skip
    assert translate_answer("client:get_resources", error, agent="0.2", computer="0.4") == {
        "code": 4015, "message": "m", "mcp_server_name": "wiki", "capability": "resources",
        "details": {"mcp_server_name": "wiki"}}  # fmt: skip
    assert before == (TOOLS_04, CONFIG_04)  # inputs never mutated


def test_02_computer_seen_by_a_04_agent() -> None:
    tools = translate_answer("client:get_tools", TOOLS_02, agent="0.4", computer="0.2")
    assert tools["tools"][0]["name"] == f"{LEGACY_BUNDLE}__search"
    assert tools["tools"][0]["bundle_id"] == LEGACY_BUNDLE
    assert list(tools["tools"][0]) == ["name", "bundle_id", "description", "params_schema",
                                       "return_schema"]  # fmt: skip
    req = {"computer": "c", "tool_name": f"{LEGACY_BUNDLE}__search", "params": {}}
    assert translate_request("client:tool_call", req, agent="0.4", computer="0.2") == {
        "computer": "c", "tool_name": "search", "params": {}}  # fmt: skip
    other = {"tool_name": "wiki__search"}
    assert translate_request("client:tool_call", other, agent="0.4", computer="0.2") is other
    config = translate_answer("client:get_config", CONFIG_02, agent="0.4", computer="0.2")
    assert config["servers"]["wiki"]["bundle_id"] == "wiki"
    assert config["inputs"][0]["options"] == [{"label": "dev", "value": "dev"},
                                              {"label": "prod", "value": "prod"}]  # fmt: skip
    error = {"code": 4014, "message": "m", "mcp_server_name": "wiki"}
    assert translate_answer("client:get_resources", error, agent="0.4", computer="0.2") == {
        "code": 4014, "message": "m", "mcp_server": "wiki"}  # fmt: skip
    other_error = {"code": 4001, "message": "m", "mcp_server_name": "x"}
    assert (
        translate_answer("client:get_tools", other_error, agent="0.4", computer="0.2")
        is other_error
    )


@pytest.mark.parametrize(
    ("tool", "shaped"),
    [
        ({"name": "x", "bundle_id": "fs"}, {"name": "a2c-0-2__x", "bundle_id": "a2c-0-2"}),
        ({"bundle_id": "fs", "name": "x"}, {"name": "a2c-0-2__x", "bundle_id": "a2c-0-2"}),
        ({"bundle_id": None, "name": "x", "description": "d"},
         {"name": "a2c-0-2__x", "bundle_id": "a2c-0-2", "description": "d"}),
        ({"name": "x", "description": "d", "bundle_id": "a2c-0-2"},
         {"name": "a2c-0-2__x", "bundle_id": "a2c-0-2", "description": "d"}),
        ({"name": "x"}, {"name": "a2c-0-2__x", "bundle_id": "a2c-0-2"}),
    ],
)  # fmt: skip
def test_a_02_tool_cannot_name_its_own_bundle(tool: dict[str, object], shaped: object) -> None:
    # A bundle_id after the name overrode a2c-0-2 (key order decided).
    answer = translate_answer("client:get_tools", {"tools": [tool]}, agent="0.4", computer="0.2")
    assert answer["tools"] == [shaped]
    assert list(answer["tools"][0])[:2] == ["name", "bundle_id"]


def test_put_blob_passes_both_ways_unchanged() -> None:
    """Uploads have one shape on both lines; who may take one is the Server's rule (a 0.2
    Computer may announce the extension), so translation never refuses them."""
    passed = {"blob": ""}
    for agent, computer in (("0.4", "0.2"), ("0.2", "0.4")):
        assert (
            translate_request("client:put_blob", passed, agent=agent, computer=computer) is passed
        )


@pytest.mark.parametrize("junk", [None, 3, "x", [1], {"tools": "nope"}, {"servers": [1]}])
def test_odd_shapes_pass_through(junk: object) -> None:
    for event in ("client:get_tools", "client:get_config"):
        for agent, computer in (("0.2", "0.4"), ("0.4", "0.2")):
            translate_answer(event, junk, agent=agent, computer=computer)  # never raises
