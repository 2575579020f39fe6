"""Error codes, flat payloads and the exception tree, both ways."""

import pytest

import a2c_protocol as core
from a2c_protocol import (
    WS_CLOSE_VERSION_REJECTED,
    A2CError,
    CallToolResult,
    ErrorCode,
    ErrorPayload,
    error_from_payload,
    error_payload_from_wire,
    to_wire,
    tool_error_from_result,
)


def test_every_code_of_the_digest_is_defined() -> None:
    assert {int(c) for c in ErrorCode} == {
        400, 401, 403, 404, 408, 500,
        4001, 4002, 4003, 4004, 4005, 4006, 4007, 4008,
        4014, 4015, 4016, 4017, 4018, 4019, 4101, 4102, 4103, 4104,
    }  # fmt: skip
    assert WS_CLOSE_VERSION_REJECTED == 4900
    assert 4900 not in {int(c) for c in ErrorCode}  # close codes live apart


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (400, core.BadRequestError), (401, core.UnauthorizedError), (403, core.ForbiddenError),
        (404, core.NotFoundError), (408, core.RequestTimeoutError), (500, core.InternalError),
        (4101, core.RoomFullError), (4102, core.RoomNotFoundError), (4103, core.NotInOfficeError),
        (4104, core.CrossOfficeError), (4999, core.RemoteError),
    ],
)  # fmt: skip
def test_generic_payloads_map_to_typed_exceptions_and_back(code: int, cls: type) -> None:
    wire = {"code": code, "message": "why", "details": {"computer_name": "c1"}}
    exc = error_from_payload(error_payload_from_wire(wire))
    assert type(exc) is cls
    assert isinstance(exc, A2CError)
    assert (exc.code, exc.message, exc.details) == (code, "why", {"computer_name": "c1"})
    assert to_wire(exc.to_payload()) == wire


def test_4008_round_trip_keeps_every_version_field() -> None:
    wire = {"code": 4008, "message": "Protocol version mismatch", "server_version": "0.2.0",
            "client_version": "0.3.0", "min_supported": "0.2.0", "max_supported": "0.2.999"}  # fmt: skip
    exc = error_from_payload(error_payload_from_wire(wire))
    assert isinstance(exc, core.ProtocolVersionError)
    assert (exc.server_version, exc.client_version, exc.min_supported, exc.max_supported) == (
        "0.2.0", "0.3.0", "0.2.0", "0.2.999")  # fmt: skip
    assert "0.3.0" in str(exc) and "0.2.0" in str(exc)  # both versions in the message (C5)
    assert to_wire(exc.to_payload()) == wire


def test_4014_4015_round_trip() -> None:
    w14 = {"code": 4014, "message": "gone", "mcp_server_name": "wiki"}
    e14 = error_from_payload(error_payload_from_wire(w14))
    assert isinstance(e14, core.McpServerNotFoundError) and e14.mcp_server_name == "wiki"
    assert to_wire(e14.to_payload()) == w14
    w15 = {"code": 4015, "message": "no", "mcp_server_name": "wiki", "capability": "resources"}
    e15 = error_from_payload(error_payload_from_wire(w15))
    assert isinstance(e15, core.CapabilityNotSupportedError) and e15.capability == "resources"
    assert to_wire(e15.to_payload()) == w15


def test_typed_payload_missing_its_fields_degrades_to_generic() -> None:
    payload = error_payload_from_wire({"code": 4015, "message": "no"})
    assert type(payload) is ErrorPayload
    assert type(error_from_payload(payload)) is core.RemoteError


def test_invalid_payload_error_becomes_flat_400() -> None:
    with pytest.raises(core.InvalidPayloadError) as info:
        core.from_wire(core.GetToolsReq, {"agent": "a"})
    payload = to_wire(info.value.to_payload())
    assert payload["code"] == 400
    assert "req_id" in payload["message"]
    assert {"path": "$.computer", "problem": "required field is missing"} in payload["details"][
        "errors"
    ]


def _failed(code: int | None, **meta: object) -> CallToolResult:
    body: dict[str, object] = dict(meta)
    if code is not None:
        body["error_code"] = code
    return CallToolResult(content=[{"type": "text", "text": "it failed"}], is_error=True, meta=body)


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (4001, core.ToolNotFoundError), (4002, core.ToolDisabledError),
        (4003, core.ToolExecutionError), (4004, core.ToolTimeoutError),
        (4005, core.ToolConfirmationRequiredError), (4006, core.ToolAuthorizationRequiredError),
        (4007, core.ToolAuthorizationFailedError), (None, core.ToolError),
    ],
)  # fmt: skip
def test_tool_results_map_to_typed_errors(code: int | None, cls: type) -> None:
    result = _failed(code)
    error = tool_error_from_result(result)
    assert type(error) is cls
    assert error is not None and error.result is result and error.code == code
    assert "it failed" in str(error)


def test_authorization_errors_expose_only_the_safe_hint() -> None:
    result = _failed(
        4006,
        mcp_server="ticketing",
        auth_hint={"action": "user_authorization_required", "message": "Sign in", "junk": 1},
    )
    error = tool_error_from_result(result)
    assert isinstance(error, core.ToolAuthorizationRequiredError)
    assert error.mcp_server == "ticketing"
    assert error.auth_hint == {"action": "user_authorization_required", "message": "Sign in"}
    assert error.hint_message == "Sign in"


def test_successful_result_is_not_an_error() -> None:
    assert tool_error_from_result(CallToolResult(content=[])) is None


def test_remote_error_of_decodes_flat_payloads_only() -> None:
    error = core.remote_error_of({"code": 4103, "message": "join first"})
    assert isinstance(error, core.NotInOfficeError)
    assert core.remote_error_of({"tools": [], "req_id": "r"}) is None
    assert core.remote_error_of({"code": 400, "message": "m", "details": "not an object"}) is None


def test_4019_keeps_its_open_reason() -> None:
    wire = {"code": 4019, "message": "full", "details": {"reason": "too_large", "limit": 5}}
    exc = error_from_payload(error_payload_from_wire(wire))
    assert isinstance(exc, core.BlobWriteError)
    assert exc.reason == core.BlobWriteReason.TOO_LARGE
    assert to_wire(exc.to_payload()) == wire
    odd = error_from_payload(error_payload_from_wire({"code": 4019, "message": "?"}))
    assert isinstance(odd, core.BlobWriteError) and odd.reason is None
