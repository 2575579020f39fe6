"""An MCP server's input request as the Agent sees it, and the Agent's answer as the server
needs it.

Rules:

* a request goes to the Agent as MCP's JSON (``{"method", "params"}``), unchanged;
* a form that asks for a secret is refused here, never shown (MCP forbids secrets in form
  mode; :func:`~a2c_protocol.secret_fields` says which fields);
* a URL-mode request carries a web link or is refused here, never shown (``https:``, or
  ``http:`` to loopback: :func:`~a2c_protocol._input.url_refusal` names the scheme);
* every key the Agent was asked must be answered, with the answer of that request's kind
  (:func:`~a2c_protocol.response_from_wire`), an accepted form with content that fits its
  schema, and a result the ``mcp`` models accept; otherwise the retry is refused naming the
  first problem and the request keeps waiting for a corrected answer;
* an accepted URL request carries no content (whatever the Agent sent);
* a refusal (``a2c_error``) is a JSON-RPC error in the handshake era; in 2026-07-28, where
  an answer cannot be an error, a refused form or URL is a ``decline`` and a refused
  sampling ends the call with the Agent's reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from mcp import types
from pydantic import BaseModel, ValidationError

from a2c_protocol import (
    ElicitationResponse,
    InputRefusal,
    InputResponse,
    InvalidPayloadError,
    JsonObject,
    RootsResponse,
    SamplingResponse,
)
from a2c_protocol._input import (
    ELICIT,
    SAMPLE,
    content_problems,
    response_from_wire,
    secret_fields,
    url_refusal,
)

__all__ = [
    "HandshakeAnswer",
    "check_answers",
    "handshake_answer",
    "modern_answer",
    "refused_unasked",
    "request_of",
]

#: What a handshake-era callback hands back to the MCP session.
HandshakeAnswer: TypeAlias = (
    types.ElicitResult
    | types.CreateMessageResult
    | types.CreateMessageResultWithTools
    | types.ListRootsResult
    | types.ErrorData
)


def request_of(method: str, params: BaseModel | None) -> JsonObject:
    """MCP's JSON of a server-initiated request (its ``params`` as the wire spells them)."""
    dumped = params.model_dump(by_alias=True, exclude_none=True, mode="json") if params else {}
    dumped.pop("_meta", None)  # the session's own bookkeeping, nothing the Agent answers
    return {"method": method, "params": dumped}


def refused_unasked(request: JsonObject) -> str | None:
    """Why ``request`` is refused without asking the Agent (None: ask)."""
    params = request.get("params") or {}
    if not isinstance(params, dict):
        return None  # malformed: the typed reading names the problem
    if request.get("method") == ELICIT and params.get("mode") == "url":
        return url_refusal(params.get("url"))
    if request.get("method") == ELICIT and params.get("mode", "form") == "form":
        secret = secret_fields(params.get("requestedSchema"))
        if secret:
            return (
                f"the form asks for a secret ({', '.join(secret)}), which MCP forbids in form "
                "mode: ask for it with a URL-mode elicitation"
            )
    return None


def _wants_tools(request: JsonObject) -> bool:
    params = request.get("params") or {}
    return bool(params.get("tools")) or params.get("toolChoice") is not None


def _mcp_result(request: JsonObject, response: InputResponse) -> BaseModel:
    """The ``mcp`` model of an answer (ValidationError when it does not fit)."""
    if isinstance(response, ElicitationResponse):
        return types.ElicitResult(action=response.action, content=response.content)
    if isinstance(response, SamplingResponse):
        content = response.result.get("content")
        if _wants_tools(request) or isinstance(content, list):
            return types.CreateMessageResultWithTools.model_validate(response.result)
        return types.CreateMessageResult.model_validate(response.result)
    if isinstance(response, RootsResponse):
        return types.ListRootsResult.model_validate({"roots": response.roots})
    raise TypeError(response)  # pragma: no cover - refusals are not results


def check_answers(
    asked: Mapping[str, JsonObject], answers: object
) -> dict[str, InputResponse] | str:
    """The Agent's typed answers to ``asked`` (key → request), or the first problem."""
    if not isinstance(answers, dict):
        return "a2c_input_responses must be an object answering every request"
    missing = [key for key in asked if key not in answers]
    if missing:
        return f"no answer for {', '.join(map(repr, missing))} in a2c_input_responses"
    typed: dict[str, InputResponse] = {}
    for key, request in asked.items():
        method = str(request.get("method"))
        try:
            response = response_from_wire(method, answers[key], f"$.a2c_input_responses.{key}")
        except InvalidPayloadError as exc:
            return "; ".join(f"{e.path}: {e.problem}" for e in exc.errors)
        params = request.get("params") or {}
        if isinstance(response, ElicitationResponse) and response.action == "accept":
            if params.get("mode", "form") == "url":
                response = ElicitationResponse.accept()
            else:
                problems = content_problems(params.get("requestedSchema") or {}, response.content)
                if problems:
                    return f"the answer to {key!r} does not fit the form: " + "; ".join(problems)
        if not isinstance(response, InputRefusal):
            try:
                _mcp_result(request, response)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                return (
                    f"the answer to {key!r} is not a valid {method} result: {where}: {first['msg']}"
                )
        typed[key] = response
    return typed


def handshake_answer(request: JsonObject, response: InputResponse) -> HandshakeAnswer:
    """A checked answer, as a handshake-era callback returns it to the MCP session."""
    if isinstance(response, InputRefusal):
        return types.ErrorData(code=response.code, message=response.message)
    result: Any = _mcp_result(request, response)
    return result  # type: ignore[no-any-return]


def modern_answer(request: JsonObject, response: InputResponse) -> JsonObject | str:
    """A checked answer as a 2026-07-28 ``inputResponses`` value, or why the call ends."""
    if isinstance(response, InputRefusal):
        if request.get("method") == ELICIT:
            return {"action": "decline"}
        what = "sampling" if request.get("method") == SAMPLE else str(request.get("method"))
        return f"the Agent refused the {what} request: {response.message}"
    dumped: JsonObject = _mcp_result(request, response).model_dump(
        by_alias=True, exclude_none=True, mode="json"
    )
    return dumped
