"""A hostile Computer's tool that asks: input-required answers written by hand, on the wire.

For a :class:`~a2c_testkit.scripted_computer.ScriptedComputer` (a raw python-socketio
client joined as a Computer), so the Agent side meets exactly what a compromised or foreign
Computer could send, with none of our Computer's checks in between: thousands of requests
in a round, kinds the Agent never declared, ``javascript:`` links, terminal control
sequences in messages, URLs and server names, more rounds than a call takes, a round that
expires at once. The answers are built here as plain dicts (not through the core's
helpers), in MCP 2026-07-28's multi-round shape plus our ``_meta`` keys.

    tool = HostileTool([{f"s{i}": sampling(f"q{i}") for i in range(5000)}], server="evil")
    computer.on(Event.TOOL_CALL, tool)
"""

from __future__ import annotations

import itertools
from typing import Any

__all__ = ["HostileTool", "form", "input_required", "sampling", "url"]


def form(message: str, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """A form-mode ``elicitation/create`` entry."""
    schema = {"type": "object", "properties": properties or {"answer": {"type": "string"}}}
    params = {"mode": "form", "message": message, "requestedSchema": schema}
    return {"method": "elicitation/create", "params": params}


def url(message: str, link: str) -> dict[str, Any]:
    """A URL-mode ``elicitation/create`` entry."""
    return {"method": "elicitation/create", "params": {"mode": "url", "message": message,
                                                       "url": link}}  # fmt: skip


def sampling(text: str, **params: Any) -> dict[str, Any]:
    """A ``sampling/createMessage`` entry with one user message."""
    message = {"role": "user", "content": {"type": "text", "text": text}}
    return {"method": "sampling/createMessage",
            "params": {"messages": [message], "maxTokens": 10, **params}}  # fmt: skip


def input_required(
    requests: dict[str, Any], state: str, *, server: str | None, expires_in: float | None
) -> dict[str, Any]:
    """One input-required answer, spelled by hand."""
    meta: dict[str, Any] = {}
    if server is not None:
        meta["a2c_mcp_server"] = server
    if expires_in is not None:
        meta["a2c_expires_in"] = expires_in
    answer: dict[str, Any] = {
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": state,
    }
    if meta:
        answer["_meta"] = meta
    return answer


class HostileTool:
    """A ``client:tool_call`` handler that asks ``rounds`` in turn, whatever it is told.

    Every call naming a state it handed out gets the next round (answers are recorded,
    never checked); after the last round, a text result ``"done"``. A call without
    ``a2c_input`` gets ``"no input declared"``. ``server`` lands in ``_meta.a2c_mcp_server``
    and ``expires_in`` in ``_meta.a2c_expires_in`` (None: left out).
    """

    def __init__(
        self,
        rounds: list[dict[str, Any]],
        *,
        server: str | None = "hostile",
        expires_in: float | None = 300,
    ) -> None:
        self.rounds = rounds
        self.server = server
        self.expires_in = expires_in
        #: ``a2c_input_responses`` of every retry, in order (the cancel round included).
        self.answers: list[dict[str, Any]] = []
        #: the ``a2c_input`` each call declared.
        self.declared: list[Any] = []
        self._states: dict[str, int] = {}
        self._numbers = itertools.count(1)

    def __call__(self, payload: dict[str, Any]) -> Any:
        if "a2c_input" not in payload:
            return {"content": [{"type": "text", "text": "no input declared"}], "isError": False}
        self.declared.append(payload["a2c_input"])
        state = payload.get("a2c_request_state")
        if state is None:
            return self._ask(0)
        self.answers.append(payload.get("a2c_input_responses") or {})
        index = self._states.pop(state, None)
        if index is None or index + 1 >= len(self.rounds):
            return {"content": [{"type": "text", "text": "done"}], "isError": False}
        return self._ask(index + 1)

    def _ask(self, index: int) -> dict[str, Any]:
        state = f"hostile-{next(self._numbers)}"
        self._states[state] = index
        return input_required(
            self.rounds[index], state, server=self.server, expires_in=self.expires_in
        )
