"""The typed requests and answers of the input extension, and their JSON spellings.

Rules (docs/compatibility.md, *Extension: input requests*):

* an Agent declares what it can answer on each ``client:tool_call`` in ``a2c_input``, in
  MCP's client-capabilities spelling (``{"elicitation": {"form": {}, "url": {}},
  "sampling": {"tools": {}}}``; ``{"elicitation": {}}`` means form only, as in MCP);
* a Computer answers such a call, when its MCP server asks, with an input-required result:
  ``{"resultType": "input_required", "inputRequests": {key: {"method", "params"}},
  "requestState": str, "_meta": {"a2c_mcp_server", "a2c_expires_in"}}``;
* the Agent calls again with ``a2c_input_responses`` (every key answered: MCP's
  ``ElicitResult`` / ``CreateMessageResult`` / ``ListRootsResult``, or
  ``{"a2c_error": {"code", "message"}}`` to refuse one) and the ``requestState`` unchanged
  in ``a2c_request_state``.

Only the three MCP methods are input requests; their ``params`` stay MCP's JSON, read
through the typed views below.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Final, Literal, TypeAlias

import attrs

from a2c_protocol._exceptions import FieldError, InvalidPayloadError
from a2c_protocol._models._fields import JsonObject

__all__ = [
    "A2C_ERROR",
    "ELICIT",
    "INPUT_REQUIRED",
    "LIST_ROOTS",
    "SAMPLE",
    "ElicitationRequest",
    "ElicitationResponse",
    "InputCapabilities",
    "InputOrigin",
    "InputRefusal",
    "InputRequest",
    "InputRequired",
    "InputResponse",
    "RootsRequest",
    "RootsResponse",
    "SamplingRequest",
    "SamplingResponse",
    "decline_for",
    "input_request_of",
    "input_required_answer",
    "is_input_required",
    "parse_input_required",
    "response_from_wire",
    "response_to_wire",
]

INPUT_REQUIRED: Final = "input_required"
ELICIT: Final = "elicitation/create"
SAMPLE: Final = "sampling/createMessage"
LIST_ROOTS: Final = "roots/list"
#: Key of a refused input request in ``a2c_input_responses`` (MCP has no result for it).
A2C_ERROR: Final = "a2c_error"
_META_SERVER: Final = "a2c_mcp_server"
_META_EXPIRES: Final = "a2c_expires_in"
_ACTIONS: Final = ("accept", "decline", "cancel")

ElicitAction: TypeAlias = Literal["accept", "decline", "cancel"]


# ------------------------------------------------------------------ capabilities


@attrs.frozen(kw_only=True)
class InputCapabilities:
    """What an Agent can answer during one tool call (the ``a2c_input`` object)."""

    form: bool = True
    url: bool = True
    sampling: bool = True
    sampling_tools: bool = True

    def to_wire(self) -> JsonObject:
        """MCP's client-capabilities spelling; an empty object when nothing is taken."""
        wire: JsonObject = {}
        modes: JsonObject = {
            name: {} for name, on in (("form", self.form), ("url", self.url)) if on
        }
        if modes:
            wire["elicitation"] = modes
        if self.sampling:
            wire["sampling"] = {"tools": {}} if self.sampling_tools else {}
        return wire

    @classmethod
    def from_wire(cls, data: object) -> InputCapabilities:
        """Lenient reading: anything unknown or mistyped is simply not taken."""
        if not isinstance(data, dict):
            return cls(form=False, url=False, sampling=False, sampling_tools=False)
        elicit = data.get("elicitation")
        sampling = data.get("sampling")
        modes = elicit if isinstance(elicit, dict) else {}
        return cls(
            form=isinstance(elicit, dict) and ("form" in modes or "url" not in modes),
            url=isinstance(elicit, dict) and "url" in modes,
            sampling=isinstance(sampling, dict),
            sampling_tools=isinstance(sampling, dict) and isinstance(sampling.get("tools"), dict),
        )

    def takes(self, request: InputRequest) -> bool:
        """Whether a request of this kind may be put to the Agent."""
        if isinstance(request, ElicitationRequest):
            return self.url if request.mode == "url" else self.form
        if isinstance(request, SamplingRequest):
            return self.sampling and (self.sampling_tools or not request.wants_tools)
        return False  # roots are the Computer's own (docs/computer.md)


# ---------------------------------------------------------------------- requests


@attrs.frozen(kw_only=True)
class InputOrigin:
    """Who asks: the Computer, the tool called there and its MCP server (when known)."""

    computer: str
    tool: str
    mcp_server: str | None = None


@attrs.frozen(kw_only=True)
class ElicitationRequest:
    """MCP ``elicitation/create``: a form to fill (``requested_schema``) or a URL to visit.

    A URL is to be shown to the user, never opened by code: the user opens it, then
    answers ``accept`` (or declines).
    """

    key: str
    message: str
    mode: Literal["form", "url"]
    requested_schema: JsonObject | None = None
    url: str | None = None
    params: JsonObject = attrs.field(factory=dict)
    origin: InputOrigin | None = None

    method: ClassVar[str] = ELICIT


@attrs.frozen(kw_only=True)
class SamplingRequest:
    """MCP ``sampling/createMessage``: the MCP server asks the Agent's model for a reply.

    ``params`` is MCP's JSON (``messages``, ``maxTokens``, ``systemPrompt``, ``tools``...).
    """

    key: str
    params: JsonObject = attrs.field(factory=dict)
    origin: InputOrigin | None = None

    method: ClassVar[str] = SAMPLE

    @property
    def messages(self) -> list[JsonObject]:
        messages = self.params.get("messages")
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    @property
    def system_prompt(self) -> str | None:
        prompt = self.params.get("systemPrompt")
        return prompt if isinstance(prompt, str) else None

    @property
    def max_tokens(self) -> int | None:
        tokens = self.params.get("maxTokens")
        return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None

    @property
    def wants_tools(self) -> bool:
        """The MCP server offers the model tools (sampling with tools)."""
        return bool(self.params.get("tools"))


@attrs.frozen(kw_only=True)
class RootsRequest:
    """MCP ``roots/list``. Our Computer answers it itself; an Agent rarely sees one."""

    key: str
    params: JsonObject = attrs.field(factory=dict)
    origin: InputOrigin | None = None

    method: ClassVar[str] = LIST_ROOTS


InputRequest: TypeAlias = ElicitationRequest | SamplingRequest | RootsRequest


@attrs.frozen(kw_only=True)
class InputRequired:
    """An input-required answer, read: the requests to answer and the state to send back."""

    requests: tuple[InputRequest, ...]
    state: str
    mcp_server: str | None = None
    expires_in: float | None = None


# --------------------------------------------------------------------- responses


@attrs.frozen
class ElicitationResponse:
    """MCP ``ElicitResult``: ``accept`` (with ``content`` for a form), ``decline``, ``cancel``."""

    action: ElicitAction
    content: JsonObject | None = None

    @classmethod
    def accept(cls, content: JsonObject | None = None) -> ElicitationResponse:
        return cls("accept", content)

    @classmethod
    def decline(cls) -> ElicitationResponse:
        return cls("decline")

    @classmethod
    def cancel(cls) -> ElicitationResponse:
        return cls("cancel")


@attrs.frozen
class SamplingResponse:
    """MCP ``CreateMessageResult`` (``role``, ``content``, ``model``, ``stopReason``)."""

    result: JsonObject

    @classmethod
    def text(cls, text: str, *, model: str, stop_reason: str = "endTurn") -> SamplingResponse:
        """A plain text reply of the assistant."""
        return cls(
            {
                "role": "assistant",
                "content": {"type": "text", "text": text},
                "model": model,
                "stopReason": stop_reason,
            }
        )


@attrs.frozen
class RootsResponse:
    """MCP ``ListRootsResult``: ``[{"uri": "file://...", "name"?}]``."""

    roots: list[JsonObject]


@attrs.frozen
class InputRefusal:
    """The request is refused (a sampling the user declined, a kind not handled...).

    The MCP server gets an error with ``message``; an elicitation is better declined with
    :meth:`ElicitationResponse.decline`, which the MCP server handles as a user's choice.
    """

    message: str
    code: int = -1


InputResponse: TypeAlias = ElicitationResponse | SamplingResponse | RootsResponse | InputRefusal


def decline_for(request: InputRequest, reason: str = "declined") -> InputResponse:
    """The polite no: ``decline`` for an elicitation, a refusal naming ``reason`` otherwise."""
    if isinstance(request, ElicitationRequest):
        return ElicitationResponse.decline()
    return InputRefusal(f"{request.method} {reason}")


# ------------------------------------------------------------------ JSON spelling


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
    answer: JsonObject = {
        "resultType": INPUT_REQUIRED,
        "inputRequests": dict(requests),
        "requestState": state,
    }
    meta: JsonObject = {}
    if mcp_server is not None:
        meta[_META_SERVER] = mcp_server
    if expires_in is not None:
        meta[_META_EXPIRES] = expires_in
    if meta:
        answer["_meta"] = meta
    return answer


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
