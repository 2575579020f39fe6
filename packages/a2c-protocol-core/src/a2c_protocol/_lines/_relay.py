"""The relay-point dispatcher: which shape translation applies to which event, per direction.

A Server calls :func:`translate_request` on a ``client:*`` request before it forwards it
to the Computer, and :func:`translate_answer` on the Computer's ack before it hands it to
the Agent, both only when the two parties speak different lines (:func:`needs_translation`).
Notifications, join/leave/list_room and auth are the same on both lines.
"""

from __future__ import annotations

from typing import Any

from a2c_protocol._events import Event

from . import _shapes
from ._versions import LINE_0_2, LINE_0_4, Line

__all__ = [
    "needs_translation",
    "translate_answer",
    "translate_request",
]


def needs_translation(agent: Line, computer: Line) -> bool:
    """Whether an Agent on ``agent`` and a Computer on ``computer`` need the Server's help."""
    return agent != computer


def translate_request(event: str, payload: Any, *, agent: Line, computer: Line) -> Any:
    """An Agent's ``client:*`` request in the Computer's shapes.

    ``client:put_blob`` has one shape on both lines and passes unchanged: who may take an
    upload is the Server's rule (a 0.2 party may announce the extension), not a translation.
    """
    if agent == computer:
        return payload
    tool_call = event == Event.TOOL_CALL.value and isinstance(payload, dict)
    if tool_call and agent == LINE_0_4 and "tool_name" in payload:
        renamed = _shapes.tool_name_04_to_02(payload["tool_name"])
        if renamed is not payload["tool_name"]:
            return {**payload, "tool_name": renamed}
    return payload


def translate_answer(event: str, answer: Any, *, agent: Line, computer: Line) -> Any:
    """The Computer's ack to ``event`` in the Agent's shapes (ErrorPayloads included)."""
    if agent == computer or not isinstance(answer, dict):
        return answer
    to_02 = agent == LINE_0_2
    if isinstance(answer.get("code"), int) and "message" in answer:
        return _shapes.error_04_to_02(answer) if to_02 else _shapes.error_02_to_04(answer)
    if event == Event.GET_TOOLS.value and "tools" in answer:
        convert = _shapes.tools_04_to_02 if to_02 else _shapes.tools_02_to_04
        return {**answer, "tools": convert(answer["tools"])}
    if event == Event.GET_CONFIG.value:
        return _shapes.config_04_to_02(answer) if to_02 else _shapes.config_02_to_04(answer)
    return answer
