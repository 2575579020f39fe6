"""The pure rules of ``a2c-agent mcp``: served names, the merged list, results, URIs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_agent import AgentTool, ToolCallTimeoutError
from a2c_agent._bridge._catalog import CatalogCache, Route, build_catalog, serves
from a2c_agent._bridge._names import (
    DEFAULT_SEPARATOR,
    MAX_NAME_LENGTH,
    is_valid_name,
    separator_problem,
    tool_names,
)
from a2c_agent._bridge._results import error_result, mcp_result, unreachable_result
from a2c_agent._bridge._uris import parse_uri, served_uri, split_entry
from a2c_protocol import CallToolResult, NotFoundError, ToolCallProgress, from_wire


def tool(computer: str, name: str, **meta: Any) -> AgentTool:
    return AgentTool(
        computer=computer, name=name, description=f"does {name}",
        params_schema={"type": "object", "properties": {"q": {"type": "string"}}},
        return_schema=None, meta=meta, tool_meta=None,
    )  # fmt: skip


# ------------------------------------------------------------------------------ names


def test_plain_names_are_joined_as_they_are() -> None:
    assert tool_names([("box", "echo")]) == {("box", "echo"): "box__echo"}
    assert tool_names([("box", "echo")], "-") == {("box", "echo"): "box-echo"}


def test_a_name_that_needed_changing_carries_a_digest_of_its_pair() -> None:
    names = tool_names([("build box", "run.tests"), ("build_box", "run_tests")])
    changed, plain = names[("build box", "run.tests")], names[("build_box", "run_tests")]
    assert plain == "build_box__run_tests"
    assert changed.startswith("build_box__run_tests_") and changed != plain
    # the digest depends on the pair only: the same with or without other Computers
    assert tool_names([("build box", "run.tests")])[("build box", "run.tests")] == changed


def test_pairs_that_join_to_the_same_name_both_get_a_digest() -> None:
    names = tool_names([("a__b", "c"), ("a", "b__c")])
    assert len(set(names.values())) == 2
    assert all(name.startswith("a__b__c_") for name in names.values())


def test_a_computer_cannot_take_or_hide_another_computers_tool_name() -> None:
    # 'büro'/'deploy' is served as b_ro__deploy_<d>; a Computer named
    # 'b_ro' with tools 'deploy_<d>' and 'deploy_<d>_<d>' used to leave it under no name.
    digest = tool_names([("büro", "deploy")])[("büro", "deploy")].rpartition("_")[2]
    crafted = [("b_ro", f"deploy_{digest}"), ("b_ro", f"deploy_{digest}_{digest}")]
    names = tool_names([("büro", "deploy"), *crafted])
    assert len(set(names.values())) == 3
    catalog = build_catalog(
        {"büro": [tool("büro", "deploy")], "b_ro": [tool("b_ro", t) for _, t in crafted]}
    )
    routes = {(r.computer, r.tool) for r in catalog.routes.values()}
    assert routes == {("büro", "deploy"), *crafted}
    assert len(catalog.tools) == 3


def test_names_still_clashing_after_every_round_are_numbered() -> None:
    # Only a crafted digest collision gets this far; rounds=0 takes the fallback at once.
    names = tool_names([("a__b", "c"), ("a", "b__c"), ("a", "b__c_1")], rounds=0)
    assert names == {("a", "b__c"): "a__b__c_2", ("a__b", "c"): "a__b__c_3",
                     ("a", "b__c_1"): "a__b__c_1"}  # fmt: skip


def test_long_names_are_cut_to_the_limit() -> None:
    name = tool_names([("c" * 50, "t" * 50)])[("c" * 50, "t" * 50)]
    assert len(name) == MAX_NAME_LENGTH and is_valid_name(name)


@pytest.mark.parametrize("separator", ["", ".", "a b", "123456789", "/"])
def test_bad_separators_are_refused(separator: str) -> None:
    assert separator_problem(separator) is not None
    with pytest.raises(ValueError, match="separator"):
        tool_names([("a", "b")], separator)


@given(st.lists(st.tuples(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80)),
                unique=True, max_size=30))  # fmt: skip
def test_served_names_are_always_valid_and_unique(pairs: list[tuple[str, str]]) -> None:
    names = tool_names(pairs)
    assert set(names) == set(pairs)
    assert all(is_valid_name(name) for name in names.values())
    assert len(set(names.values())) == len(pairs)


# ---------------------------------------------------------------------------- catalog


def test_the_catalog_merges_computers_in_order_and_names_each() -> None:
    annotations = json.dumps({"readOnlyHint": True, "title": "Echo"})
    catalog = build_catalog(
        {
            "zeta": [tool("zeta", "echo")],
            "alpha": [tool("alpha", "echo", MCP_TOOL_ANNOTATION=annotations,
                           a2c_mcp_server="scene"), tool("alpha", "slow")],
        }
    )  # fmt: skip
    assert [t["name"] for t in catalog.tools] == ["alpha__echo", "alpha__slow", "zeta__echo"]
    echo = catalog.tools[0]
    assert echo["description"] == "[A2C Computer 'alpha', MCP server 'scene'] does echo"
    assert echo["annotations"] == {"readOnlyHint": True, "title": "Echo"}
    assert echo["title"] == "Echo (alpha)"
    assert echo["inputSchema"] == {"type": "object", "properties": {"q": {"type": "string"}}}
    assert echo["_meta"] == {"a2c_computer": "alpha", "a2c_tool": "echo", "a2c_mcp_server": "scene"}
    assert "annotations" not in catalog.tools[1]
    route = catalog.route("zeta__echo")
    assert route is not None and (route.computer, route.tool) == ("zeta", "echo")
    assert catalog.route("nope") is None


def test_the_computer_filter_and_broken_annotations() -> None:
    catalog = build_catalog(
        {"a": [tool("a", "x", MCP_TOOL_ANNOTATION="{not json")], "b": [tool("b", "y")]},
        computers=["a"],
    )
    assert [t["name"] for t in catalog.tools] == ["a__x"]
    assert "annotations" not in catalog.tools[0]


def test_a_name_nobody_serves_gets_the_closest_served_name() -> None:
    catalog = build_catalog({"alpha": [tool("alpha", "echo"), tool("alpha", "slow")]})
    assert catalog.suggestion("alpha__ecoh") == "alpha__echo"
    assert catalog.suggestion("alpha_echo") == "alpha__echo"
    assert catalog.suggestion("completely-different") is None
    assert catalog.input_schema("alpha__echo") == {
        "type": "object", "properties": {"q": {"type": "string"}}
    }  # fmt: skip
    assert catalog.input_schema("nope") is None


def test_the_filter_covers_every_computer_lookup() -> None:
    assert serves("alpha", ()) and serves("alpha", ("alpha",))
    assert not serves("beta", ("alpha",))


def test_the_catalog_is_rebuilt_only_when_a_computers_tools_change() -> None:
    cache = CatalogCache((), DEFAULT_SEPARATOR)
    alpha = (tool("alpha", "echo"),)
    first = cache.get({"alpha": alpha})
    assert cache.get({"alpha": alpha}) is first  # a new mapping, the same tuple: cached
    changed = cache.get({"alpha": (tool("alpha", "echo"),)})  # equal, but another tuple
    assert changed is not first and changed == first
    grown = cache.get({"alpha": alpha, "beta": (tool("beta", "x"),)})
    assert [t["name"] for t in grown.tools] == ["alpha__echo", "beta__x"]
    cache.forget()  # the Computers left
    assert cache.get({}).tools == ()


def test_a_computer_missing_from_the_cache_keeps_its_last_tools_until_it_leaves() -> None:
    cache = CatalogCache((), DEFAULT_SEPARATOR)
    alpha, beta = (tool("alpha", "echo"),), (tool("beta", "x"),)
    cache.get({"alpha": alpha, "beta": beta})
    # A refresh emptied the Agent's cache and beta's fetch failed: beta stays served.
    kept = cache.get({"alpha": alpha})
    assert kept.route("beta__x") is not None and kept.route("alpha__echo") is not None
    assert cache.get({}).route("alpha__echo") is not None
    fresh = (tool("beta", "y"),)
    assert [t["name"] for t in cache.get({"beta": fresh}).tools] == ["alpha__echo", "beta__y"]
    cache.forget("alpha")  # alpha left the office
    assert [t["name"] for t in cache.get({"beta": fresh}).tools] == ["beta__y"]
    # The leave notice comes before the Agent drops the Computer from its cache.
    cache.get({"alpha": alpha, "beta": fresh})
    cache.forget("beta")
    assert [t["name"] for t in cache.get({"alpha": alpha, "beta": fresh}).tools] == [
        "alpha__echo",
        "beta__y",
    ]
    assert [t["name"] for t in cache.get({"alpha": alpha}).tools] == ["alpha__echo"]
    assert [t["name"] for t in cache.get({"alpha": alpha, "beta": fresh}).tools] == [
        "alpha__echo",
        "beta__y",
    ]  # back in the office
    cache.forget()
    assert cache.get({}).tools == ()


def test_a_name_served_before_still_leads_to_its_computer_once_it_left_the_list() -> None:
    cache = CatalogCache(("alpha",), DEFAULT_SEPARATOR)
    cache.get({"alpha": (tool("alpha", "echo"),), "beta": (tool("beta", "x"),)})
    cache.forget("alpha")  # alpha left the office (moving to another Server node)
    gone = cache.get({})
    assert gone.route("alpha__echo") is None
    assert cache.known_route("alpha__echo") == Route(computer="alpha", tool="echo")
    assert cache.known_route("beta__x") is None  # never served: the filter keeps it out
    assert cache.known_route("alpha__nothing") is None


def test_a_tool_without_schema_type_gets_an_object_schema() -> None:
    bare = AgentTool(computer="c", name="t", description="", params_schema={},
                     return_schema={"type": "object"}, meta={}, tool_meta=None)  # fmt: skip
    (served,) = build_catalog({"c": [bare]}).tools
    assert served["inputSchema"] == {"type": "object"}
    assert served["outputSchema"] == {"type": "object"}
    assert served["description"] == "[A2C Computer 'c'] tool 't'"


# ---------------------------------------------------------------------------- results


def result(wire: dict[str, Any]) -> CallToolResult:
    return from_wire(CallToolResult, wire)


def test_a_result_passes_through_with_structured_content() -> None:
    out = mcp_result(
        result({"content": [{"type": "text", "text": "hi"}], "isError": False,
                "structuredContent": {"a": 1}}),
        "box",
    )  # fmt: skip
    assert out == {"content": [{"type": "text", "text": "hi"}], "isError": False,
                   "structuredContent": {"a": 1}}  # fmt: skip


def test_a_failed_result_names_its_code() -> None:
    out = mcp_result(result({"content": [], "isError": True, "meta": {"error_code": 4005}}), "b")
    assert out["isError"] is True
    assert out["_meta"] == {"error_code": 4005, "a2c_error_code": 4005}
    assert out["content"] == [{"type": "text", "text": "A2C error 4005"}]


def test_an_item_left_behind_its_blob_handle_becomes_text() -> None:
    item = {"type": "image", "data": "", "mimeType": "image/png",
            "_meta": {"a2c_blob_handle": "h1", "a2c_blob_error": "not drained: too big"}}  # fmt: skip
    (text,) = mcp_result(result({"content": [item], "isError": False}), "box")["content"]
    assert text["type"] == "text"
    assert "image item (image/png) not inlined: not drained: too big" in text["text"]
    assert "blob handle h1 on A2C Computer 'box'" in text["text"]


def test_errors_become_error_results() -> None:
    remote = error_result(NotFoundError("no Computer 'box' here"), computer="box", tool="x")
    assert remote["isError"] is True
    assert remote["_meta"] == {"a2c_error": "NotFoundError", "a2c_error_code": 404}
    assert remote["content"][0]["text"] == (
        "A2C error 404: no Computer 'box' here [tool 'x' on A2C Computer 'box']"
    )
    local = error_result(ToolCallTimeoutError("box", "x", "r1", 5), computer="box", tool="x")
    assert local["_meta"] == {"a2c_error": "ToolCallTimeoutError"}
    assert "ToolCallTimeoutError" in local["content"][0]["text"]
    down = unreachable_result("o1", "cannot reach it")
    assert down["content"][0]["text"] == "A2C office 'o1' is unreachable: cannot reach it"


def test_progress_fields() -> None:
    from a2c_agent._bridge._results import progress_fields

    report = ToolCallProgress(agent="a", req_id="r", computer="c", progress=2, total=4,
                              message="half")  # fmt: skip
    assert progress_fields(report) == (2, 4, "half")


# ------------------------------------------------------------------------------- URIs


@pytest.mark.parametrize(
    ("computer", "window"),
    [("box", "window://org.example/main"), ("build box/2", "window://h/a%2Fb/c"),
     ("ü", "window://h")],
)  # fmt: skip
def test_served_uris_round_trip(computer: str, window: str) -> None:
    uri = served_uri(computer, window)
    assert uri.startswith("a2c://")
    assert parse_uri(uri) == (computer, window)


@pytest.mark.parametrize("uri", ["window://h/x", "a2c://box", "a2c:///window://h",
                                 "a2c://box/note://h", "a2c://box/window://"])  # fmt: skip
def test_other_uris_are_not_ours(uri: str) -> None:
    assert parse_uri(uri) is None


def test_split_entry() -> None:
    assert split_entry("window://h/a\n\nline 1\n\nline 2") == ("window://h/a", "line 1\n\nline 2")
    assert split_entry("window://h/a") == ("window://h/a", "")
