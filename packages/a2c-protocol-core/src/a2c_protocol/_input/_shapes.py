"""The typed requests and answers of the input extension: what the roles hand around.

Only the three MCP methods are input requests (``ELICIT``, ``SAMPLE``, ``LIST_ROOTS``);
their ``params`` stay MCP's JSON, read through the typed views below. How they are spelled
in a tool call's answer and in ``a2c_input_responses`` is :mod:`._json`'s.
"""

from __future__ import annotations

from typing import ClassVar, Final, Literal, TypeAlias

import attrs

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
]

INPUT_REQUIRED: Final = "input_required"
ELICIT: Final = "elicitation/create"
SAMPLE: Final = "sampling/createMessage"
LIST_ROOTS: Final = "roots/list"
#: Key of a refused input request in ``a2c_input_responses`` (MCP has no result for it).
A2C_ERROR: Final = "a2c_error"

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
