"""0.4 tool names on our Computer: one bundle per MCP server (issue 38 item 4)."""

from a2c_computer._bundles import bundle_id_of, tool_name_from_04, tools_for_04

SERVERS = {"echo": "desk", "search": "my server", "x__y": "a__b"}


def test_bundles_are_valid_ids_named_after_their_server() -> None:
    assert bundle_id_of("desk") == "desk"
    assert bundle_id_of("my server") == "my-server"
    assert bundle_id_of("a__b") == "a_b" and bundle_id_of("a___b") == "a_b"
    assert bundle_id_of("") == "server"


def test_tools_round_trip_and_foreign_bundles_stay_unknown() -> None:
    tools = [{"name": n, "description": "d"} for n in SERVERS] + [{"name": "orphan"}]
    shown = tools_for_04(tools, SERVERS.get)
    assert [(t["name"], t.get("bundle_id")) for t in shown] == [
        ("desk__echo", "desk"), ("my-server__search", "my-server"), ("a_b__x__y", "a_b"),
        ("orphan", None),
    ]  # fmt: skip
    for tool, original in zip(shown, SERVERS, strict=False):
        assert tool_name_from_04(tool["name"], SERVERS.get) == original
    assert tool_name_from_04("other__echo", SERVERS.get) == "other__echo"  # -> 4001
    assert tool_name_from_04("echo", SERVERS.get) == "echo"
