"""The input extension's pure rules: shapes, forms, and pending states bound to their call."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_protocol import (
    ElicitationRequest,
    ElicitationResponse,
    InputCapabilities,
    InputOrigin,
    InputRefusal,
    InputRequiredResult,
    InvalidPayloadError,
    RootsRequest,
    RootsResponse,
    SamplingRequest,
    SamplingResponse,
    ToolCallReq,
    from_wire,
    parse_input_required,
    to_wire,
)
from a2c_protocol._input import (
    InputBinding,
    PendingInputs,
    StateRefusal,
    content_problems,
    decline_for,
    form_fields,
    input_request_of,
    input_required_answer,
    is_input_required,
    params_digest,
    parse_field,
    response_from_wire,
    response_to_wire,
    secret_fields,
)

FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}
URL = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "Sign in", "url": "https://example.test/x"},
}
SAMPLING = {
    "method": "sampling/createMessage",
    "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
               "maxTokens": 10},
}  # fmt: skip
TOOLS_SAMPLING = {
    "method": "sampling/createMessage",
    "params": {**SAMPLING["params"], "tools": [{"name": "t", "inputSchema": {}}]},  # type: ignore[dict-item]
}


# ------------------------------------------------------------------ capabilities


@given(st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_capabilities_round_trip_through_mcp_spelling(
    form: bool, url: bool, sampling: bool, tools: bool
) -> None:
    caps = InputCapabilities(
        form=form, url=url, sampling=sampling, sampling_tools=sampling and tools
    )
    back = InputCapabilities.from_wire(caps.to_wire())
    if not (form or url):
        assert "elicitation" not in caps.to_wire()
    assert back == caps


@pytest.mark.parametrize(
    ("wire", "form", "url", "sampling", "tools"),
    [
        ({"elicitation": {}}, True, False, False, False),  # MCP: empty means form only
        ({"elicitation": {"url": {}}}, False, True, False, False),
        ({"elicitation": {"form": {}, "url": {}}, "sampling": {}}, True, True, True, False),
        ({"sampling": {"tools": {}}}, False, False, True, True),
        ({"elicitation": True, "sampling": "yes"}, False, False, False, False),
        ([], False, False, False, False),
        (None, False, False, False, False),
    ],
)
def test_capabilities_are_read_leniently(
    wire: object, form: bool, url: bool, sampling: bool, tools: bool
) -> None:
    caps = InputCapabilities.from_wire(wire)
    assert (caps.form, caps.url, caps.sampling, caps.sampling_tools) == (form, url, sampling, tools)


@pytest.mark.parametrize(
    ("caps", "request_wire", "takes"),
    [
        (InputCapabilities(), FORM, True),
        (InputCapabilities(form=False), FORM, False),
        (InputCapabilities(url=False), URL, False),
        (InputCapabilities(), URL, True),
        (InputCapabilities(sampling=False), SAMPLING, False),
        (InputCapabilities(sampling_tools=False), SAMPLING, True),
        (InputCapabilities(sampling_tools=False), TOOLS_SAMPLING, False),
        (InputCapabilities(), TOOLS_SAMPLING, True),
        (InputCapabilities(), {"method": "roots/list"}, False),  # the Computer's own
    ],
)
def test_a_request_goes_to_the_agent_only_when_declared(
    caps: InputCapabilities, request_wire: dict[str, Any], takes: bool
) -> None:
    assert caps.takes(input_request_of("k", request_wire)) is takes


# ---------------------------------------------------------------------- requests


def test_requests_are_typed() -> None:
    form = input_request_of("a", FORM)
    assert isinstance(form, ElicitationRequest)
    assert (form.mode, form.message, form.requested_schema) == (
        "form", "Your name?", FORM["params"]["requestedSchema"],  # type: ignore[index]
    )  # fmt: skip
    url = input_request_of("b", URL)
    assert isinstance(url, ElicitationRequest) and url.url == "https://example.test/x"
    sample = input_request_of("c", SAMPLING)
    assert isinstance(sample, SamplingRequest)
    assert (sample.max_tokens, sample.wants_tools, len(sample.messages)) == (10, False, 1)
    assert input_request_of("d", TOOLS_SAMPLING).wants_tools  # type: ignore[union-attr]
    assert isinstance(input_request_of("e", {"method": "roots/list"}), RootsRequest)
    legacy = {"method": "elicitation/create", "params": {**FORM["params"]}}  # type: ignore[dict-item]
    del legacy["params"]["mode"]  # MCP: no mode means form
    assert input_request_of("f", legacy).mode == "form"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ("x", "$.inputRequests.k"),
        ({"method": "tools/call", "params": {}}, "$.inputRequests.k.method"),
        ({"method": "elicitation/create", "params": []}, "$.inputRequests.k.params"),
        ({"method": "elicitation/create", "params": {"mode": "form"}},
         "$.inputRequests.k.params.message"),
        ({"method": "elicitation/create", "params": {"message": "m"}},
         "$.inputRequests.k.params.requestedSchema"),
        ({"method": "elicitation/create", "params": {"mode": "url", "message": "m"}},
         "$.inputRequests.k.params.url"),
        ({"method": "elicitation/create", "params": {"mode": "voice", "message": "m"}},
         "$.inputRequests.k.params.mode"),
        ({"method": "sampling/createMessage", "params": {}}, "$.inputRequests.k.params.messages"),
    ],
)  # fmt: skip
def test_a_bad_request_names_its_field(data: object, path: str) -> None:
    with pytest.raises(InvalidPayloadError) as caught:
        input_request_of("k", data)
    assert caught.value.errors[0].path == path


def test_an_answer_is_read_with_its_origin() -> None:
    answer = input_required_answer(
        {"a": FORM, "b": SAMPLING}, "st-1", mcp_server="greeter", expires_in=300
    )
    assert is_input_required(answer)
    assert not is_input_required({"content": []}) and not is_input_required([answer])
    assert from_wire(InputRequiredResult, answer) == InputRequiredResult(
        result_type="input_required", input_requests={"a": FORM, "b": SAMPLING},
        request_state="st-1", meta={"a2c_mcp_server": "greeter", "a2c_expires_in": 300},
    )  # fmt: skip
    assert to_wire(from_wire(InputRequiredResult, answer)) == answer
    read = parse_input_required(answer, InputOrigin(computer="box", tool="greet"))
    assert (read.state, read.mcp_server, read.expires_in) == ("st-1", "greeter", 300.0)
    assert [r.key for r in read.requests] == ["a", "b"]
    assert read.requests[0].origin == InputOrigin(
        computer="box", tool="greet", mcp_server="greeter"
    )


@pytest.mark.parametrize(
    ("answer", "path"),
    [
        ({"content": []}, "$.resultType"),
        ({"resultType": "input_required", "requestState": "s"}, "$.inputRequests"),
        ({"resultType": "input_required", "inputRequests": {}, "requestState": "s"},
         "$.inputRequests"),
        ({"resultType": "input_required", "inputRequests": {"a": FORM}}, "$.requestState"),
        ({"resultType": "input_required", "inputRequests": {"a": FORM}, "requestState": ""},
         "$.requestState"),
    ],
)  # fmt: skip
def test_a_bad_answer_names_its_field(answer: object, path: str) -> None:
    with pytest.raises(InvalidPayloadError) as caught:
        parse_input_required(answer)
    assert caught.value.errors[0].path == path


# --------------------------------------------------------------------- responses

_JSON_LEAF = st.one_of(st.text(max_size=5), st.integers(), st.booleans(), st.none())


@given(
    st.sampled_from(["accept", "decline", "cancel"]),
    st.one_of(st.none(), st.dictionaries(st.text(min_size=1, max_size=5), _JSON_LEAF, max_size=3)),
)
def test_elicitation_responses_round_trip(action: Any, content: dict[str, Any] | None) -> None:
    response = ElicitationResponse(action, content if action == "accept" else None)
    assert response_from_wire("elicitation/create", response_to_wire(response)) == response


@pytest.mark.parametrize(
    ("method", "response"),
    [
        ("sampling/createMessage", SamplingResponse.text("4", model="m")),
        ("roots/list", RootsResponse([{"uri": "file:///w", "name": "w"}])),
        ("sampling/createMessage", InputRefusal("declined by the user")),
        ("elicitation/create", InputRefusal("nope", code=-32600)),
    ],
)
def test_other_responses_round_trip(method: str, response: Any) -> None:
    assert response_from_wire(method, response_to_wire(response)) == response


def test_a_refusal_has_our_key_and_a_decline_is_the_polite_no() -> None:
    assert response_to_wire(InputRefusal("no")) == {"a2c_error": {"code": -1, "message": "no"}}
    assert decline_for(input_request_of("a", FORM)) == ElicitationResponse.decline()
    refusal = decline_for(input_request_of("b", SAMPLING))
    assert isinstance(refusal, InputRefusal) and "sampling/createMessage" in refusal.message


@pytest.mark.parametrize(
    ("method", "data", "path"),
    [
        ("elicitation/create", "accept", "$"),
        ("elicitation/create", {"action": "ok"}, "$.action"),
        ("elicitation/create", {"action": "accept", "content": []}, "$.content"),
        ("elicitation/create", {"action": "accept", "content": {"a": {"b": 1}}}, "$.content.a"),
        ("sampling/createMessage", {"role": "assistant", "content": {}}, "$.model"),
        ("sampling/createMessage", {"role": "assistant", "model": "m", "content": 3}, "$.content"),
        ("roots/list", {"roots": [{"name": "x"}]}, "$.roots"),
        ("sampling/createMessage", {"a2c_error": {"message": 3}}, "$.a2c_error"),
        ("tools/call", {}, "$"),
    ],
)
def test_a_bad_response_names_its_field(method: str, data: object, path: str) -> None:
    with pytest.raises(InvalidPayloadError) as caught:
        response_from_wire(method, data)
    assert caught.value.errors[0].path == path


# ------------------------------------------------------------------------- forms

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 8},
        "age": {"type": "integer", "minimum": 18},
        "score": {"type": "number", "maximum": 1.5},
        "ok": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["r", "g"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"},
                                             {"const": "l", "title": "Large"}]},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 2},
    },
    "required": ["name", "age"],
}  # fmt: skip


def test_form_fields_follow_the_schema_order_and_kinds() -> None:
    fields = form_fields(SCHEMA)
    assert [(f.name, f.kind, f.required) for f in fields] == [
        ("name", "string", True), ("age", "integer", True), ("score", "number", False),
        ("ok", "boolean", False), ("color", "enum", False), ("size", "enum", False),
        ("tags", "multi", False),
    ]  # fmt: skip
    assert fields[0].label == "Name" and fields[1].label == "age"
    assert fields[5].options == (("s", "Small"), ("l", "Large"))
    assert fields[3].default is True


@pytest.mark.parametrize(
    "prop",
    [{"type": "object"}, {"type": "array", "items": {"type": "string"}}, "x", {"type": None}],
)
def test_form_fields_refuse_what_mcp_does_not_allow(prop: object) -> None:
    with pytest.raises(ValueError, match="'bad'"):
        form_fields({"type": "object", "properties": {"bad": prop}})


@pytest.mark.parametrize(
    ("name", "prop", "secret"),
    [
        ("password", {"type": "string"}, True),
        ("userPassword", {"type": "string"}, True),
        ("api_key", {"type": "string"}, True),
        ("apiKey", {"type": "string"}, True),
        ("k", {"type": "string", "title": "Your API key"}, True),
        ("github_token", {"type": "string"}, True),
        ("ACCESS_TOKEN", {"type": "string"}, True),
        ("cardNumber", {"type": "string"}, True),
        ("pin", {"type": "string"}, True),
        ("x", {"type": "string", "format": "password"}, True),
        ("x", {"type": "string", "writeOnly": True}, True),
        ("name", {"type": "string"}, False),
        ("max_tokens", {"type": "integer"}, False),
        ("spinner", {"type": "string"}, False),
        ("keyboard", {"type": "string"}, False),
        ("email", {"type": "string", "description": "never your password"}, False),
    ],
)
def test_secret_fields(name: str, prop: dict[str, Any], secret: bool) -> None:
    schema = {"type": "object", "properties": {name: prop}}
    assert secret_fields(schema) == ([name] if secret else [])


@pytest.mark.parametrize(
    ("content", "problems"),
    [
        ({"name": "Ann", "age": 30}, []),
        ({"name": "Ann", "age": 30, "tags": ["a", "b"], "size": "s", "ok": False}, []),
        ({"name": "Ann"}, ["age: required"]),
        ({"name": "A", "age": 17}, ["name: must be at least 2 characters",
                                    "age: must be at least 18"]),
        ({"name": "Ann", "age": 20.5}, ["age: expected an integer"]),
        ({"name": "Ann", "age": True}, ["age: expected an integer"]),
        ({"name": "Ann", "age": 20, "score": 2}, ["score: must be at most 1.5"]),
        ({"name": "Ann", "age": 20, "color": "blue"}, ["color: must be one of ['r', 'g']"]),
        ({"name": "Ann", "age": 20, "tags": ["a", "b", "c"]}, ["tags: choose at most 2"]),
        ({"name": "Ann", "age": 20, "x": 1}, ["x: not in the form"]),
        ("nope", ["content must be an object"]),
    ],
)  # fmt: skip
def test_content_problems(content: object, problems: list[str]) -> None:
    assert content_problems(SCHEMA, content) == problems


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("name", " Ann ", "Ann"),
        ("age", "30", 30),
        ("score", "1.25", 1.25),
        ("score", "1", 1),
        ("ok", "yes", True),
        ("ok", "N", False),
        ("color", "g", "g"),
        ("size", "Large", "l"),
        ("size", "1", "s"),
        ("tags", "a, c", ["a", "c"]),
    ],
)
def test_parse_field_turns_typing_into_json(name: str, text: str, value: object) -> None:
    field = {f.name: f for f in form_fields(SCHEMA)}[name]
    assert parse_field(field, text) == value


@pytest.mark.parametrize(
    ("name", "text", "hint"),
    [("age", "x", "an integer"), ("age", "3", "at least 18"), ("ok", "maybe", "yes or no"),
     ("size", "medium", "Small"), ("name", "A", "at least 2")],
)  # fmt: skip
def test_parse_field_explains_a_wrong_answer(name: str, text: str, hint: str) -> None:
    field = {f.name: f for f in form_fields(SCHEMA)}[name]
    with pytest.raises(ValueError, match=hint):
        parse_field(field, text)


# ------------------------------------------------------------------ pending states

CALL = InputBinding(agent="ag", office="o", computer="box", tool="greet",
                    params_digest=params_digest({"a": 1}))  # fmt: skip


@pytest.mark.parametrize(
    ("changed", "shown"),
    [
        ({"agent": "other"}, "Agent"),
        ({"office": "o2"}, "office"),
        ({"office": None}, "office"),
        ({"computer": "box2"}, "Computer"),
        ({"tool": "greet2"}, "tool"),
        ({"params_digest": params_digest({"a": 2})}, "params"),
    ],
)
def test_a_state_is_refused_to_another_call_and_kept_for_its_own(
    changed: dict[str, Any], shown: str
) -> None:
    table: PendingInputs[str] = PendingInputs(300)
    table.open("s1", CALL, "item", now=0.0)
    other = _with(CALL, **changed)
    refusal = table.claim("s1", other, now=1.0)
    assert isinstance(refusal, StateRefusal)
    assert refusal.reason == "input_state_mismatch"
    assert shown in refusal.message and "ag" not in refusal.message.replace("Agent", "")
    assert table.claim("s1", CALL, now=2.0) == "item"  # its own caller still gets it


def _with(binding: InputBinding, **changes: Any) -> InputBinding:
    return attrs.evolve(binding, **changes)


def test_a_state_is_used_once_and_unknown_ones_are_told_apart_from_expired() -> None:
    table: PendingInputs[str] = PendingInputs(10, remember=2)
    table.open("s1", CALL, "one", now=0.0)
    assert table.claim("s1", CALL, now=1.0) == "one"
    again = table.claim("s1", CALL, now=1.0)
    assert isinstance(again, StateRefusal) and again.reason == "input_state_unknown"
    table.open("s2", CALL, "two", now=0.0)
    assert table.next_deadline() == 10.0
    late = table.claim("s2", CALL, now=10.0)  # lapsed but not swept yet: still "expired"
    assert isinstance(late, StateRefusal) and late.reason == "input_state_expired"
    assert "call the tool again" in late.message
    assert table.expire(now=10.0) == [("s2", CALL, "two")]
    assert len(table) == 0 and table.next_deadline() is None
    later = table.claim("s2", CALL, now=500.0)  # an Agent back much later is still told
    table.expire(now=500.0)
    assert isinstance(later, StateRefusal) and later.reason == "input_state_expired"
    with pytest.raises(ValueError):
        PendingInputs(0)


def test_lapsed_states_are_remembered_up_to_a_bound() -> None:
    table: PendingInputs[int] = PendingInputs(1, remember=2)
    for n in range(4):
        table.open(f"s{n}", CALL, n, now=0.0)
    assert len(table.expire(now=1.0)) == 4
    reasons = [table.claim(f"s{n}", CALL, now=1.5) for n in range(4)]
    assert [r.reason for r in reasons if isinstance(r, StateRefusal)] == [
        "input_state_unknown", "input_state_unknown", "input_state_expired",
        "input_state_expired",
    ]  # fmt: skip
    with pytest.raises(ValueError):
        table.open("s3", CALL, 9, now=2.0)  # a token is never reused


def test_drop_removes_the_states_of_an_agent_that_left() -> None:
    table: PendingInputs[int] = PendingInputs(60)
    table.open("a", CALL, 1, now=0.0)
    table.open("b", _with(CALL, agent="other"), 2, now=0.0)
    assert [s for s, _, _ in table.drop(lambda b: b.agent == "ag")] == ["a"]
    assert [s for s, _, _ in table.items()] == ["b"]


_OPS = st.lists(
    st.tuples(st.sampled_from(["open", "claim", "wrong", "expire"]), st.integers(0, 3),
              st.floats(0, 5)),
    max_size=30,
)  # fmt: skip


@given(_OPS)
def test_a_state_is_handed_out_at_most_once_and_only_before_its_deadline(
    ops: list[tuple[str, int, float]],
) -> None:
    table: PendingInputs[str] = PendingInputs(2.0)
    now, opened, handed = 0.0, {}, set()
    for op, n, step in ops:
        now += step
        state = f"s{n}-{len(opened)}" if op == "open" else next(
            (s for s in opened if s.startswith(f"s{n}-")), f"s{n}-x"
        )  # fmt: skip
        if op == "open":
            table.open(state, CALL, state, now)
            opened[state] = now
        elif op == "expire":
            for lapsed, _, _ in table.expire(now):
                assert opened[lapsed] + 2.0 <= now and lapsed not in handed
        else:
            got = table.claim(state, _with(CALL, tool="x") if op == "wrong" else CALL, now)
            if not isinstance(got, StateRefusal):
                assert op == "claim" and got == state and state not in handed
                assert now < opened[state] + 2.0
                handed.add(state)


# ---------------------------------------------------------------------- the call


def test_the_request_keys_are_absent_unless_used_and_round_trip() -> None:
    plain = ToolCallReq(agent="a", req_id="r", computer="c", tool_name="t", params={}, timeout=5)
    assert set(to_wire(plain)) == {"agent", "req_id", "computer", "tool_name", "params", "timeout"}
    retry = from_wire(ToolCallReq, {
        **to_wire(plain), "a2c_input": InputCapabilities().to_wire(),
        "a2c_input_responses": {"k": {"action": "decline"}}, "a2c_request_state": "st",
    })  # fmt: skip
    assert retry.a2c_request_state == "st" and retry.a2c_input_responses == {
        "k": {"action": "decline"}
    }
    assert from_wire(ToolCallReq, to_wire(retry)) == retry


@pytest.mark.parametrize(
    ("key", "value"),
    [("a2c_input", True), ("a2c_input_responses", {"k": "accept"}), ("a2c_request_state", 3)],
)
def test_a_mistyped_input_key_is_a_field_error(key: str, value: object) -> None:
    wire = {"agent": "a", "req_id": "r", "computer": "c", "tool_name": "t", "params": {},
            "timeout": 5, key: value}  # fmt: skip
    with pytest.raises(InvalidPayloadError) as caught:
        from_wire(ToolCallReq, wire)
    assert caught.value.errors[0].path.startswith(f"$.{key}")


@given(st.dictionaries(st.text(max_size=4), _JSON_LEAF, max_size=4))
def test_params_digest_ignores_key_order(params: dict[str, Any]) -> None:
    assert params_digest(params) == params_digest(dict(reversed(list(params.items()))))


def test_peek_leaves_the_state_and_take_uses_it() -> None:
    table: PendingInputs[str] = PendingInputs(10)
    table.open("s", CALL, "item", now=0.0)
    assert table.peek("s", CALL, now=1.0) == "item"
    assert table.peek("s", CALL, now=1.0) == "item"  # still there
    refused = table.peek("s", _with(CALL, agent="x"), now=1.0)
    assert isinstance(refused, StateRefusal) and refused.reason == "input_state_mismatch"
    table.take("s")
    gone = table.peek("s", CALL, now=1.0)
    assert isinstance(gone, StateRefusal) and gone.reason == "input_state_unknown"
