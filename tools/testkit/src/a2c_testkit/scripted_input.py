"""A scripted tool that asks for input, for a :class:`ScriptedComputer` (no MCP behind it).

``AskingTool(rounds)`` answers ``client:tool_call`` the way a Computer of the input
extension does: a call that declares ``a2c_input`` gets an input-required answer with the
requests of the first round and a fresh state; a retry must bring that state and an answer
for every key, then gets the next round, and after the last one a text result whose text
is the JSON list of the answers received (one dict per round). A wrong state or a missing
answer is refused with a flat 400 naming it, as our Computer does. A call that does not
declare the extension gets ``declined`` as its result text.

    tool = AskingTool([{"q1": form_request("Your name?", {"name": {"type": "string"}})}])
    computer.on(Event.TOOL_CALL, tool)
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from a2c_protocol._input import (
    input_required_answer,
)

__all__ = ["AskingTool", "form_request", "sampling_request", "url_request"]


def form_request(message: str, properties: dict[str, Any], required: list[str] | None = None
                 ) -> dict[str, Any]:  # fmt: skip
    """An MCP ``elicitation/create`` form request."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    params = {"mode": "form", "message": message, "requestedSchema": schema}
    return {"method": "elicitation/create", "params": params}


def url_request(message: str, url: str) -> dict[str, Any]:
    """An MCP ``elicitation/create`` URL-mode request."""
    return {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": message, "url": url},
    }


def sampling_request(text: str, *, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An MCP ``sampling/createMessage`` request with one user message."""
    params: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": 50,
    }
    if tools is not None:
        params["tools"] = tools
    return {"method": "sampling/createMessage", "params": params}


class AskingTool:
    """The ``client:tool_call`` handler of a tool that asks ``rounds`` in turn."""

    def __init__(self, rounds: list[dict[str, Any]], *, mcp_server: str = "asker") -> None:
        self.rounds = rounds
        self.mcp_server = mcp_server
        #: What the Agent answered, round by round.
        self.answers: list[dict[str, Any]] = []
        #: state → (round index, answers so far) of the states handed out and not used.
        self._states: dict[str, tuple[int, list[dict[str, Any]]]] = {}
        self._numbers = itertools.count(1)

    def __call__(self, payload: dict[str, Any]) -> Any:
        if "a2c_input" not in payload:
            return {"content": [{"type": "text", "text": "declined"}], "isError": False}
        state = payload.get("a2c_request_state")
        if state is None:
            return self._ask(0, [])
        if state not in self._states:
            return {"code": 400, "message": "unknown request state",
                    "details": {"reason": "input_state_unknown"}}  # fmt: skip
        index, so_far = self._states[state]
        responses = payload.get("a2c_input_responses") or {}
        missing = [key for key in self.rounds[index] if key not in responses]
        if missing:
            return {"code": 400, "message": f"no answer for {missing}",
                    "details": {"reason": "input_responses_invalid"}}  # fmt: skip
        del self._states[state]
        self.answers.append(responses)
        so_far = [*so_far, responses]
        if index + 1 < len(self.rounds):
            return self._ask(index + 1, so_far)
        return {"content": [{"type": "text", "text": json.dumps(so_far)}], "isError": False}

    def _ask(self, index: int, so_far: list[dict[str, Any]]) -> dict[str, Any]:
        state = f"state-{next(self._numbers)}"
        self._states[state] = (index, so_far)
        return input_required_answer(
            self.rounds[index], state, mcp_server=self.mcp_server, expires_in=300
        )
