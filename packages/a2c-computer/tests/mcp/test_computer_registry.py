"""Tool registry rules: meta merge, aliases, forbidden tools, clashes."""

from __future__ import annotations

import json
from typing import Any

from a2c_computer import build_registry, merge_tool_meta
from a2c_computer._registry import LookupKind
from a2c_protocol import ToolMeta, config_from_json


def cfg(servers: dict[str, dict[str, Any]]) -> Any:
    data = {
        "servers": {
            n: {"type": "stdio", "name": n, "server_parameters": {"command": "x"}, **f}
            for n, f in servers.items()
        }
    }
    return config_from_json(data).servers


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"{name} tool", "inputSchema": {"type": "object"}, **extra}


def meta_of(registry: Any, name: str) -> dict[str, Any] | None:
    raw = registry.entries[name].tool.meta.get("a2c_tool_meta")
    return json.loads(raw) if raw is not None else None


def test_worked_merge_example_from_the_config_guide() -> None:
    servers = cfg(
        {
            "repo": {
                "default_tool_meta": {"tags": ["repo"], "auto_apply": True},
                "tool_meta": {
                    "push_branch": {"auto_apply": False},
                    "grep": {"tags": ["repo", "search"], "ret_object_mapper": {"matches": "items"}},
                },
            }
        }
    )
    registry = build_registry(servers, {"repo": [tool("push_branch"), tool("grep"), tool("other")]})
    assert meta_of(registry, "push_branch") == {
        "tags": ["repo"],
        "auto_apply": False,
        "alias": None,
        "ret_object_mapper": None,
    }
    assert meta_of(registry, "grep") == {
        "tags": ["repo", "search"],
        "auto_apply": True,
        "alias": None,
        "ret_object_mapper": {"matches": "items"},
    }
    assert meta_of(registry, "other") == {
        "tags": ["repo"],
        "auto_apply": True,
        "alias": None,
        "ret_object_mapper": None,
    }


def test_no_meta_anywhere_means_no_a2c_tool_meta_key() -> None:
    registry = build_registry(cfg({"s": {}}), {"s": [tool("word_count")]})
    assert "a2c_tool_meta" not in (registry.entries["word_count"].tool.meta or {})


def test_merge_is_shallow_and_none_keeps_default() -> None:
    merged = merge_tool_meta(ToolMeta(tags=["a"], auto_apply=True), ToolMeta(tags=["b"]))
    assert merged == ToolMeta(tags=["b"], auto_apply=True)
    assert merge_tool_meta(None, None) is None


def test_alias_renames_and_maps_back() -> None:
    servers = cfg(
        {
            "repo": {"tool_meta": {"search": {"alias": "repo_search"}}},
            "tracker": {"tool_meta": {"search": {"alias": "issue_search"}}},
        }
    )
    registry = build_registry(servers, {"repo": [tool("search")], "tracker": [tool("search")]})
    assert sorted(registry.names()) == ["issue_search", "repo_search"]
    found = registry.lookup("repo_search")
    assert found.kind is LookupKind.FOUND and found.entry is not None
    assert (found.entry.server, found.entry.original) == ("repo", "search")
    assert registry.lookup("search").kind is LookupKind.UNKNOWN


def test_forbidden_tools_hidden_and_matched_by_name_or_alias() -> None:
    servers = cfg(
        {
            "s": {
                "forbidden_tools": ["force_push", "nice_alias"],
                "tool_meta": {"rm": {"alias": "nice_alias"}},
            }
        }
    )
    registry = build_registry(servers, {"s": [tool("force_push"), tool("rm"), tool("ok")]})
    assert sorted(registry.names()) == ["ok"]
    assert registry.lookup("force_push").kind is LookupKind.FORBIDDEN
    assert registry.lookup("nice_alias").kind is LookupKind.FORBIDDEN
    assert registry.lookup("rm").kind is LookupKind.FORBIDDEN


def test_clash_is_deterministic_recorded_and_keeps_other_tools() -> None:
    from a2c_computer._registry import Clash

    servers = cfg({"zeta": {}, "alpha": {}})
    registry = build_registry(
        servers,
        {"zeta": [tool("search"), tool("z_only")], "alpha": [tool("search"), tool("a_only")]},
    )
    assert sorted(registry.names()) == ["a_only", "search", "z_only"]
    assert registry.entries["search"].server == "alpha"
    assert registry.clashes == (Clash("search", "alpha", "zeta", "search"),)


def test_tool_meta_carries_annotations_and_server_meta_as_simple_values() -> None:
    servers = cfg({"s": {"default_tool_meta": {"auto_apply": True}}})
    raw = tool(
        "t",
        annotations={"readOnlyHint": True},
        _meta={"owner": "me", "deep": {"a": [1]}, "tags": ["x"]},
        outputSchema={"type": "object"},
    )
    registry = build_registry(servers, {"s": [raw]})
    smcp = registry.entries["t"].tool
    assert smcp.meta is not None
    assert json.loads(str(smcp.meta["MCP_TOOL_ANNOTATION"])) == {"readOnlyHint": True}
    assert smcp.meta["owner"] == "me" and smcp.meta["tags"] == ["x"]
    assert json.loads(str(smcp.meta["deep"])) == {"a": [1]}
    assert isinstance(smcp.meta["a2c_tool_meta"], str)
    assert smcp.return_schema == {"type": "object"} and smcp.params_schema == {"type": "object"}


def test_tool_prefix_renames_every_unaliased_tool_and_the_owner_is_in_meta() -> None:
    """Copies of one server side by side; the Agent can show the owner."""
    from a2c_computer._registry import OWNER_META_KEY, clash_advice
    from a2c_protocol import config_from_json

    def entry(name: str, **fields: object) -> dict[str, object]:
        return {"type": "stdio", "name": name, "server_parameters": {"command": "x"}, **fields}

    config = config_from_json(
        {
            "servers": {
                "a": entry("a"),
                "b": entry("b", tool_prefix="b_", tool_meta={"keep": {"alias": "kept"}}),
                "c": entry("c"),
            }
        }
    )
    raw = [{"name": "echo"}, {"name": "keep"}]
    registry = build_registry(config.servers, {"a": raw, "b": raw, "c": raw})
    assert sorted(registry.names()) == ["b_echo", "echo", "keep", "kept"]
    assert registry.lookup("b_echo").entry is not None
    assert registry.lookup("b_echo").entry.original == "echo"  # type: ignore[union-attr]
    assert {t.name: t.meta[OWNER_META_KEY] for t in registry.tools()} == {
        "echo": "a",
        "keep": "a",
        "b_echo": "b",
        "kept": "b",
    }
    assert [(c.name, c.kept, c.lost) for c in registry.clashes] == [
        ("echo", "a", "c"),
        ("keep", "a", "c"),
    ]
    (advice,) = clash_advice(registry.clashes, config.servers)
    assert "2 tool(s) of MCP server c (echo, keep)" in advice and '"tool_prefix": "c_"' in advice
