"""The converter: round-trips for every model, golden JSON shapes, strictness and errors."""

import json
import types
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import a2c_protocol as core
from a2c_protocol import (
    A2CResource,
    CallToolResult,
    ErrorPayload,
    GetComputerConfigRet,
    InvalidPayloadError,
    SMCPTool,
    StdioServerConfig,
    ToolCallReq,
    ToolMeta,
    _models,
    config_from_json,
    from_wire,
    to_wire,
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=4)


def strategy_for(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy for any type used in the wire models (derived, so new fields are covered)."""
    if tp is Any:
        return json_values
    if tp is str:
        return st.text(max_size=10)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(-(2**31), 2**31)
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return st.sampled_from(list(tp))
    if tp is _models.GetSkillRet:
        # Exactly one of body / blob_handle is set: pick which, then build.
        fields = {f.name: strategy_for(f.type) for f in attrs.fields(tp)}
        inline = {**fields, "body": st.text(max_size=10), "blob_handle": st.none()}
        handle = {**fields, "body": st.none(), "blob_handle": st.text(max_size=10)}
        return st.builds(tp, **inline) | st.builds(tp, **handle)
    if attrs.has(tp):
        fields = {f.name: strategy_for(f.type) for f in attrs.fields(tp)}
        return st.builds(tp, **fields)
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return st.sampled_from(args)
    if origin in (Union, types.UnionType):
        return st.one_of([strategy_for(a) for a in args])
    if origin is list:
        return st.lists(strategy_for(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=6), strategy_for(args[1]), max_size=3)
    if tp is type(None):
        return st.none()
    raise AssertionError(f"no strategy for {tp!r}")


def _resolved(cls: type) -> type:
    # Each model's annotations name things of the module that defines it (in ``_models/``).
    attrs.resolve_types(cls)
    return cls


WIRE_MODELS = sorted(
    (
        _resolved(obj)
        for name, obj in vars(_models).items()
        if isinstance(obj, type) and attrs.has(obj) and not name.startswith("_")
    ),
    key=lambda c: c.__name__,
)


def test_every_public_model_is_covered() -> None:
    public = {id(getattr(core, n)) for n in core.__all__}
    assert {id(m) for m in WIRE_MODELS} <= public
    assert len(WIRE_MODELS) >= 30


@pytest.mark.parametrize("model", WIRE_MODELS, ids=lambda m: m.__name__)
@given(data=st.data())
def test_round_trip_every_model(model: type, data: st.DataObject) -> None:
    value = data.draw(strategy_for(model))
    wire = to_wire(value)
    # Through real JSON text too: the wire form must be serializable as is.
    assert from_wire(model, json.loads(json.dumps(wire))) == value
    assert from_wire(model, wire) == value


@given(strategy_for(GetComputerConfigRet))
def test_config_round_trip_through_the_strict_converter(config: GetComputerConfigRet) -> None:
    # Config documents additionally require name == key (or a valid bundle_id == key),
    # unique input ids, valid durations.
    servers = {
        name: attrs.evolve(server, name=name, default_tool_meta=None, bundle_id=None)
        for name, server in config.servers.items()
    }
    servers = {
        name: (
            attrs.evolve(
                s,
                server_parameters=attrs.evolve(
                    s.server_parameters, timeout="PT1M", sse_read_timeout="PT5M"
                ),
            )
            if isinstance(s, core.StreamableServerConfig)
            # SSE speaks the handshake era only: a config pinning it to "modern" is refused
            else attrs.evolve(s, mcp_era=None)
            if isinstance(s, core.SseServerConfig) and s.mcp_era == "modern"
            else s
        )
        for name, s in servers.items()
    }
    inputs = None
    if config.inputs is not None:
        inputs = [attrs.evolve(i, id=f"in{n}") for n, i in enumerate(config.inputs)]
        inputs = [
            attrs.evolve(i, default=None) if isinstance(i, core.PickStringInput) else i
            for i in inputs
        ]
    fixed = GetComputerConfigRet(servers=servers, inputs=inputs)
    assert config_from_json(json.loads(json.dumps(to_wire(fixed)))) == fixed


# ------------------------------------------------------------------ golden shapes


def test_golden_4008_body() -> None:
    payload = core.VersionMismatchPayload(
        code=4008,
        message="Protocol version mismatch",
        server_version="0.2.0",
        client_version="0.3.1",
        min_supported="0.2.0",
        max_supported="0.2.999",
    )
    assert to_wire(payload) == {
        "code": 4008,
        "message": "Protocol version mismatch",
        "server_version": "0.2.0",
        "client_version": "0.3.1",
        "min_supported": "0.2.0",
        "max_supported": "0.2.999",
    }


def test_golden_4014_and_4015() -> None:
    assert to_wire(
        core.McpServerNotFoundPayload(
            code=4014, message="MCP server is not registered", mcp_server_name="org.example.wiki"
        )
    ) == {
        "code": 4014,
        "message": "MCP server is not registered",
        "mcp_server_name": "org.example.wiki",
    }
    assert to_wire(
        core.CapabilityNotSupportedPayload(
            code=4015, message="no resources", mcp_server_name="wiki", capability="resources"
        )
    ) == {
        "code": 4015,
        "message": "no resources",
        "mcp_server_name": "wiki",
        "capability": "resources",
    }


def test_golden_smcp_tool_with_a2c_tool_meta_string() -> None:
    tool = SMCPTool(
        name="kb_search",
        description="Search the knowledge base.",
        params_schema={"type": "object", "properties": {"q": {"type": "string"}}},
        return_schema=None,
        meta={},
    )
    tool = core.with_tool_meta(
        tool, ToolMeta(auto_apply=False, alias="kb_search", tags=["kb", "read"])
    )
    wire = to_wire(tool)
    assert isinstance(wire["meta"]["a2c_tool_meta"], str)
    assert json.loads(wire["meta"]["a2c_tool_meta"]) == {
        "auto_apply": False,
        "ret_object_mapper": None,
        "alias": "kb_search",
        "tags": ["kb", "read"],
    }
    assert wire["return_schema"] is None  # required, nullable: present as null
    assert core.tool_meta_of(from_wire(SMCPTool, wire)) == ToolMeta(
        auto_apply=False, alias="kb_search", tags=["kb", "read"]
    )
    no_meta = SMCPTool(name="wc", description="d", params_schema={}, return_schema=None, meta={})
    assert core.tool_meta_of(no_meta) is None
    assert core.tool_meta_of(core.with_tool_meta(tool, None)) is None


def test_tool_meta_from_other_sdks_ignores_unknown_keys() -> None:
    assert core.decode_tool_meta('{"auto_apply": true, "vendor_x": 1}') == ToolMeta(auto_apply=True)
    with pytest.raises(InvalidPayloadError, match="not JSON"):
        core.decode_tool_meta("{nope")


def test_golden_tool_call_req_and_result() -> None:
    data = {
        "agent": "planner",
        "req_id": "6f1c",
        "computer": "build-box-7",
        "tool_name": "repo_grep",
        "params": {"pattern": "TODO"},
        "timeout": 45,
    }
    assert to_wire(from_wire(ToolCallReq, data)) == data
    result = {
        "content": [{"type": "text", "text": "Sign in"}],
        "isError": True,
        "meta": {
            "error_code": 4006,
            "mcp_server": "ticketing",
            "auth_hint": {"action": "user_authorization_required", "message": "Sign in"},
        },
    }
    assert to_wire(from_wire(CallToolResult, result)) == result


def test_call_tool_result_accepts_mcp_meta_spelling() -> None:
    parsed = from_wire(CallToolResult, {"content": [], "isError": False, "_meta": {"k": 1}})
    assert parsed.meta == {"k": 1}
    assert to_wire(parsed) == {"content": [], "isError": False, "meta": {"k": 1}}


def test_optional_fields_absent_stay_absent() -> None:
    notification = {"office_id": "o-1", "computer": "build-box-7"}
    assert to_wire(from_wire(core.EnterOfficeNotification, notification)) == notification
    page = {
        "resources": [{"uri": "window://a", "mimeType": "text/plain", "title": "kept"}],
        "req_id": "r",
    }
    assert to_wire(from_wire(core.GetResourcesRet, page)) == page
    assert to_wire(
        from_wire(core.GetDeskTopReq, {"agent": "a", "req_id": "r", "computer": "c"})
    ) == {"agent": "a", "req_id": "r", "computer": "c"}


def test_a2c_resource_spellings() -> None:
    resource = from_wire(
        A2CResource, {"uri": "window://h", "mime_type": "text/plain", "_meta": {"fullscreen": True}}
    )
    assert resource.mime_type == "text/plain"
    assert to_wire(resource) == {
        "uri": "window://h",
        "mimeType": "text/plain",
        "_meta": {"fullscreen": True},
    }


# ------------------------------------------------------------------- strictness


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {
                "agent": "a",
                "req_id": "r",
                "computer": "c",
                "tool_name": "t",
                "params": {},
                "timeout": "3",
            },
            "timeout: expected int, got string @ $.timeout",
        ),
        (
            {
                "agent": 3,
                "req_id": "r",
                "computer": "c",
                "tool_name": "t",
                "params": {},
                "timeout": 3,
            },
            "agent: expected string, got int @ $.agent",
        ),
        (
            {
                "agent": "a",
                "req_id": "r",
                "computer": "c",
                "tool_name": "t",
                "params": [],
                "timeout": 3,
            },
            "params: expected object, got array @ $.params",
        ),
        (
            {
                "agent": "a",
                "req_id": "r",
                "computer": "c",
                "tool_name": "t",
                "params": {},
                "timeout": True,
            },
            "timeout: expected int, got boolean @ $.timeout",
        ),
        (
            {"agent": "a", "computer": "c", "tool_name": "t", "params": {}, "timeout": 3},
            "req_id: required field is missing @ $.req_id",
        ),
        ("not an object", "expected object, got string @ $"),
    ],
)
def test_invalid_payloads_name_the_field(data: object, expected: str) -> None:
    with pytest.raises(InvalidPayloadError) as info:
        from_wire(ToolCallReq, data)
    assert expected in str(info.value)
    payload = info.value.to_payload()
    assert payload.code == 400 and expected in payload.message


def test_every_field_error_is_reported_at_once() -> None:
    with pytest.raises(InvalidPayloadError) as info:
        from_wire(ToolCallReq, {"agent": 1, "req_id": 2})
    paths = {e.path for e in info.value.errors}
    assert paths == {"$.agent", "$.req_id", "$.computer", "$.tool_name", "$.params", "$.timeout"}


def test_unknown_keys_from_peers_are_ignored() -> None:
    data = {"agent": "a", "req_id": "r", "computer": "c", "future_field": {"x": 1}}
    assert from_wire(core.GetToolsReq, data) == core.GetToolsReq(
        agent="a", req_id="r", computer="c"
    )


def test_role_must_be_a_known_value() -> None:
    with pytest.raises(InvalidPayloadError, match="role: expected one of 'agent', 'computer'"):
        from_wire(core.EnterOfficeReq, {"role": "admin", "name": "n", "office_id": "o"})


def test_nested_error_paths() -> None:
    with pytest.raises(InvalidPayloadError) as info:
        from_wire(core.ListRoomRet, {"sessions": [{"sid": 1}], "req_id": "x"})
    assert "sid: expected string, got int @ $.sessions[0].sid" in str(info.value)


# ----------------------------------------------------------------- config files

SPEC_EXAMPLE = {
    "inputs": [
        {
            "id": "tracker_token",
            "type": "promptString",
            "description": "API token",
            "password": True,
        },
        {
            "id": "deploy_env",
            "type": "pickString",
            "description": "Target",
            "options": ["dev", "staging", "prod"],
            "default": "dev",
        },
        {
            "id": "repo_root",
            "type": "command",
            "description": "Repo",
            "command": "git rev-parse --show-toplevel",
        },
    ],
    "servers": {
        "repo-tools": {
            "type": "stdio",
            "name": "repo-tools",
            "disabled": False,
            "forbidden_tools": ["force_push"],
            "default_tool_meta": {"tags": ["repo"], "auto_apply": True},
            "tool_meta": {
                "push_branch": {"auto_apply": False},
                "search": {"alias": "repo_search", "ret_object_mapper": {"matches": "items"}},
            },
            "vrl": 'if .isError == false { .summary = "ok:" + .tool_name }',
            "server_parameters": {
                "command": "repo-mcp",
                "args": ["--root", "${input:repo_root}"],
                "env": {"DEPLOY_ENV": "${input:deploy_env}"},
                "cwd": None,
                "encoding": "utf-8",
                "encoding_error_handler": "strict",
            },
        },
        "issue-tracker": {
            "type": "streamable",
            "name": "issue-tracker",
            "disabled": False,
            "forbidden_tools": [],
            "tool_meta": {"search": {"alias": "issue_search"}},
            "default_tool_meta": None,
            "server_parameters": {
                "url": "https://tracker.example.org/mcp",
                "headers": {"Authorization": "Bearer ${input:tracker_token}"},
                "timeout": "PT30S",
                "sse_read_timeout": "PT5M",
                "terminate_on_close": True,
            },
        },
        "legacy-metrics": {
            "type": "sse",
            "name": "legacy-metrics",
            "disabled": True,
            "forbidden_tools": [],
            "tool_meta": {},
            "server_parameters": {
                "url": "http://127.0.0.1:9400/sse",
                "headers": None,
                "timeout": 5.0,
                "sse_read_timeout": 300.0,
            },
        },
    },
}


def test_spec_example_config_parses_and_keeps_placeholders() -> None:
    config = config_from_json(SPEC_EXAMPLE)
    repo = config.servers["repo-tools"]
    assert isinstance(repo, StdioServerConfig)
    assert repo.server_parameters.args == ["--root", "${input:repo_root}"]
    assert isinstance(config.servers["issue-tracker"], core.StreamableServerConfig)
    wire = to_wire(config)
    assert wire["servers"]["issue-tracker"]["type"] == "streamable"
    assert wire["servers"]["legacy-metrics"]["server_parameters"]["timeout"] == 5.0
    assert config_from_json(wire) == config


def test_omitted_config_fields_take_documented_defaults() -> None:
    config = config_from_json(
        {
            "servers": {
                "s": {
                    "type": "http",
                    "name": "s",
                    "server_parameters": {"url": "http://127.0.0.1:1/mcp"},
                }
            }
        }
    )
    server = config.servers["s"]
    assert isinstance(server, core.StreamableServerConfig)
    assert (server.disabled, server.forbidden_tools, server.tool_meta) == (False, [], {})
    params = server.server_parameters
    assert (params.timeout, params.sse_read_timeout, params.terminate_on_close) == (
        "PT30S",
        "PT5M",
        True,
    )
    assert to_wire(config)["servers"]["s"]["type"] == "streamable"


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            {
                "servers": {
                    "s": {
                        "type": "stdio",
                        "name": "s",
                        "server_parameters": {"command": "x", "argz": []},
                    }
                }
            },
            "argz: unknown key @ $.servers['s'].server_parameters.argz",
        ),
        (
            {
                "servers": {
                    "s": {"type": "stdio", "name": "t", "server_parameters": {"command": "x"}}
                }
            },
            "must equal its key 's'",
        ),
        ({"servers": {"s": {"type": "grpc", "name": "s"}}}, "'type' must be one of"),
        (
            {
                "servers": {
                    "s": {
                        "type": "streamable",
                        "name": "s",
                        "server_parameters": {"url": "u", "timeout": "30s"},
                    }
                }
            },
            "not an ISO 8601 duration",
        ),
        (
            {
                "servers": {
                    "s": {
                        "type": "stdio",
                        "name": "s",
                        "server_parameters": {"command": "x"},
                        "default_tool_meta": {"alias": "same"},
                    }
                }
            },
            "same name",
        ),
        (
            {
                "servers": {},
                "inputs": [
                    {
                        "id": "a",
                        "type": "pickString",
                        "description": "d",
                        "options": ["x"],
                        "default": "y",
                    }
                ],
            },
            "default must be one of options",
        ),
        (
            {
                "servers": {},
                "inputs": [
                    {"id": "a", "type": "command", "description": "d", "command": "x"},
                    {"id": "a", "type": "command", "description": "d", "command": "x"},
                ],
            },
            "duplicate input id",
        ),
        ({"servers": {}, "typo": 1}, "typo: unknown key"),
    ],
)
def test_config_errors_name_field_and_path(doc: dict[str, Any], expected: str) -> None:
    with pytest.raises(InvalidPayloadError) as info:
        config_from_json(doc)
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("PT30S", 30.0), ("PT5M", 300.0), ("PT1H30M", 5400.0), ("P1DT1S", 86401.0), ("PT0.5S", 0.5)],
)
def test_iso_durations(text: str, seconds: float) -> None:
    assert core.parse_iso8601_duration(text) == seconds


@pytest.mark.parametrize("text", ["30", "PT", "P", "P1Y", "PT5X", "pt5m", ""])
def test_bad_iso_durations(text: str) -> None:
    with pytest.raises(ValueError):
        core.parse_iso8601_duration(text)


def test_error_payload_detection() -> None:
    assert core.is_error_payload({"code": 404, "message": "m"})
    assert not core.is_error_payload({"code": True, "message": "m"})
    assert not core.is_error_payload({"tools": [], "req_id": "r"})
    assert not core.is_error_payload([404, "m"])
    assert type(core.error_payload_from_wire({"code": 4015, "message": "m"})) is ErrorPayload
    # 4014 lost its required mcp_server_name in 0.2.1 (skills put the name in details).
    bare = core.error_payload_from_wire({"code": 4014, "message": "m"})
    assert isinstance(bare, core.McpServerNotFoundPayload) and bare.mcp_server_name is None


def test_duration_placeholders_are_left_to_the_computer() -> None:
    doc = {"servers": {"s": {"type": "streamable", "name": "s", "server_parameters": {
        "url": "http://127.0.0.1:1/mcp", "timeout": "${input:http_timeout}"}}}}  # fmt: skip
    params = config_from_json(doc).servers["s"].server_parameters
    assert isinstance(params, core.MCPServerStreamableHttpParameters)
    assert params.timeout == "${input:http_timeout}"


def test_semantic_config_errors_use_the_same_path_style() -> None:
    with pytest.raises(InvalidPayloadError) as info:
        config_from_json(
            {
                "servers": {
                    "s": {"type": "stdio", "name": "t", "server_parameters": {"command": "x"}}
                }
            }
        )
    assert info.value.errors[0].path == "$.servers['s'].name"
