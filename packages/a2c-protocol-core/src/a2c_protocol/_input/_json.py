"""The JSON spellings of the input extension: reading and writing the typed values.

Rules (docs/compatibility.md, *Extension: input requests*):

* an Agent declares what it can answer on each ``client:tool_call`` in ``a2c_input``, in
  MCP's client-capabilities spelling (``{"elicitation": {"form": {}, "url": {}},
  "sampling": {"tools": {}}}``; ``{"elicitation": {}}`` means form only, as in MCP), which
  ``InputCapabilities`` reads and writes itself;
* a Computer answers such a call, when its MCP server asks, with an input-required result:
  ``{"resultType": "input_required", "inputRequests": {key: {"method", "params"}},
  "requestState": str, "_meta": {"a2c_mcp_server", "a2c_expires_in"}}``;
* the Agent calls again with ``a2c_input_responses`` (every key answered: MCP's
  ``ElicitResult`` / ``CreateMessageResult`` / ``ListRootsResult``, or
  ``{"a2c_error": {"code", "message"}}`` to refuse one) and the ``requestState`` unchanged
  in ``a2c_request_state``.

Reading is strict where a peer's mistake would go unnoticed: an InvalidPayloadError names
the field that is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import attrs

from a2c_protocol._exceptions import FieldError, InvalidPayloadError
from a2c_protocol._models import InputRequiredResult
from a2c_protocol._models._fields import JsonObject
from a2c_protocol._wire import to_wire

from ._shapes import (
    A2C_ERROR,
    ELICIT,
    INPUT_REQUIRED,
    LIST_ROOTS,
    SAMPLE,
    ElicitationRequest,
    ElicitationResponse,
    InputOrigin,
    InputRefusal,
    InputRequest,
    InputRequired,
    InputResponse,
    RootsRequest,
    RootsResponse,
    SamplingRequest,
    SamplingResponse,
)

__all__ = [
    "input_request_of",
    "input_required_answer",
    "is_input_required",
    "parse_input_required",
    "response_from_wire",
    "response_to_wire",
]

_META_SERVER: Final = "a2c_mcp_server"
_META_EXPIRES: Final = "a2c_expires_in"
_ACTIONS: Final = ("accept", "decline", "cancel")


def _fail(label: str, path: str, message: str) -> InvalidPayloadError:
    return InvalidPayloadError(label, [FieldError(path, message)])


def input_request_of(key: str, data: object, origin: InputOrigin | None = None) -> InputRequest:
    """The typed request of one ``inputRequests`` entry; raises InvalidPayloadError."""
    path = f"$.inputRequests.{key}"
    if not isinstance(data, dict):
        raise _fail("InputRequest", path, "expected an object")
    method, params = data.get("method"), data.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise _fail("InputRequest", f"{path}.params", "expected an object")
    if method == ELICIT:
        mode = params.get("mode", "form")
        message = params.get("message")
        if not isinstance(message, str):
            raise _fail("InputRequest", f"{path}.params.message", "expected a string")
        if mode == "url":
            url = params.get("url")
            if not isinstance(url, str) or not url:
                raise _fail("InputRequest", f"{path}.params.url", "expected a URL string")
            return ElicitationRequest(
                key=key, message=message, mode="url", url=url, params=params, origin=origin
            )
        if mode != "form":
            raise _fail("InputRequest", f"{path}.params.mode", f"unknown mode {mode!r}")
        schema = params.get("requestedSchema")
        if not isinstance(schema, dict):
            raise _fail("InputRequest", f"{path}.params.requestedSchema", "expected an object")
        return ElicitationRequest(
            key=key, message=message, mode="form", requested_schema=schema, params=params,
            origin=origin,
        )  # fmt: skip
    if method == SAMPLE:
        if not isinstance(params.get("messages"), list):
            raise _fail("InputRequest", f"{path}.params.messages", "expected an array")
        return SamplingRequest(key=key, params=params, origin=origin)
    if method == LIST_ROOTS:
        return RootsRequest(key=key, params=params, origin=origin)
    raise _fail("InputRequest", f"{path}.method", f"not an input request: {method!r}")


def is_input_required(answer: object) -> bool:
    """Whether a ``client:tool_call`` answer is an input-required result (cheap check)."""
    return type(answer) is dict and answer.get("resultType") == INPUT_REQUIRED


def parse_input_required(answer: object, origin: InputOrigin | None = None) -> InputRequired:
    """Read an input-required answer; raises InvalidPayloadError naming what is wrong.

    ``origin`` (the Agent knows the Computer and the tool it called) is stamped on each
    request, with the answer's ``a2c_mcp_server``.
    """
    label = "InputRequiredResult"
    if not is_input_required(answer):
        raise _fail(label, "$.resultType", f"expected {INPUT_REQUIRED!r}")
    assert isinstance(answer, dict)
    requests, state = answer.get("inputRequests"), answer.get("requestState")
    if not isinstance(requests, dict) or not requests:
        raise _fail(label, "$.inputRequests", "expected a non-empty object")
    if not isinstance(state, str) or not state:
        raise _fail(label, "$.requestState", "expected a non-empty string")
    meta = answer.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    server = meta.get(_META_SERVER)
    server = server if isinstance(server, str) else None
    expires = meta.get(_META_EXPIRES)
    expires_in = float(expires) if isinstance(expires, int | float) else None
    if origin is not None and server is not None:
        origin = attrs.evolve(origin, mcp_server=server)
    typed = tuple(input_request_of(str(k), v, origin) for k, v in requests.items())
    return InputRequired(requests=typed, state=state, mcp_server=server, expires_in=expires_in)


def input_required_answer(
    requests: Mapping[str, JsonObject],
    state: str,
    *,
    mcp_server: str | None = None,
    expires_in: float | None = None,
) -> JsonObject:
    """The Computer's input-required answer (MCP spelling plus our ``_meta`` keys)."""
    meta = {
        key: value
        for key, value in ((_META_SERVER, mcp_server), (_META_EXPIRES, expires_in))
        if value is not None
    }
    result = InputRequiredResult(
        result_type=INPUT_REQUIRED,
        input_requests=dict(requests),
        request_state=state,
        meta=meta or None,
    )
    wire: JsonObject = to_wire(result)
    return wire


def response_to_wire(response: InputResponse) -> JsonObject:
    """One ``a2c_input_responses`` value."""
    if isinstance(response, ElicitationResponse):
        wire: JsonObject = {"action": response.action}
        if response.content is not None:
            wire["content"] = response.content
        return wire
    if isinstance(response, SamplingResponse):
        return dict(response.result)
    if isinstance(response, RootsResponse):
        return {"roots": list(response.roots)}
    return {A2C_ERROR: {"code": response.code, "message": response.message}}


def _primitive(value: object) -> bool:
    if isinstance(value, list):
        return all(isinstance(item, str) for item in value)
    return value is None or isinstance(value, str | int | float | bool)


def response_from_wire(method: str, data: object, path: str = "$") -> InputResponse:
    """One answer to a request of ``method``; raises InvalidPayloadError naming the field."""
    label = "InputResponse"
    if not isinstance(data, dict):
        raise _fail(label, path, "expected an object")
    if A2C_ERROR in data:
        error = data[A2C_ERROR]
        message = error.get("message") if isinstance(error, dict) else None
        code = error.get("code", -1) if isinstance(error, dict) else None
        if not isinstance(message, str) or type(code) is not int:
            raise _fail(label, f"{path}.{A2C_ERROR}", "expected {code: int, message: str}")
        return InputRefusal(message, code)
    if method == ELICIT:
        action = data.get("action")
        if action not in _ACTIONS:
            raise _fail(label, f"{path}.action", "expected 'accept', 'decline' or 'cancel'")
        content = data.get("content")
        if content is not None and not isinstance(content, dict):
            raise _fail(label, f"{path}.content", "expected an object")
        if content is not None:
            for name, value in content.items():
                if not _primitive(value):
                    expected = "expected a string, number, boolean or array of strings"
                    raise _fail(label, f"{path}.content.{name}", expected)
        return ElicitationResponse(action, content if action == "accept" else None)
    if method == SAMPLE:
        for name, kind in (("role", str), ("model", str)):
            if not isinstance(data.get(name), kind):
                raise _fail(label, f"{path}.{name}", "expected a string")
        if not isinstance(data.get("content"), dict | list):
            raise _fail(label, f"{path}.content", "expected an object or an array")
        return SamplingResponse(dict(data))
    if method == LIST_ROOTS:
        roots = data.get("roots")
        if not isinstance(roots, list) or not all(
            isinstance(r, dict) and isinstance(r.get("uri"), str) for r in roots
        ):
            raise _fail(label, f"{path}.roots", "expected an array of {uri: str}")
        return RootsResponse(list(roots))
    raise _fail(label, path, f"not an input request: {method!r}")
