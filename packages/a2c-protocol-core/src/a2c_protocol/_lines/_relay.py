"""The relay-point dispatcher: which shape translation applies to which event, per direction.

A Server calls :func:`translate_request` on a ``client:*`` request before it forwards it
to the Computer, and :func:`translate_answer` on the Computer's ack before it hands it to
the Agent, both only when the two parties speak different lines (:func:`needs_translation`).
Notifications, join/leave/list_room and auth are the same on both lines.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from . import _shapes
from ._versions import LINE_0_2, LINE_0_4, Line

__all__ = [
    "PUT_BLOB_EVENT",
    "Refusal",
    "needs_translation",
    "translate_answer",
    "translate_request",
]

#: The 0.4 upload event (its models live with the 0.4 events; only its name is needed here).
PUT_BLOB_EVENT: Final = "client:put_blob"
# 4019 BLOB_WRITE_FAILED (0.4): the refusal code of an upload a Computer cannot take.
_BLOB_WRITE_FAILED: Final = 4019


@attrs.frozen
class Refusal:
    """A request that cannot be translated: answer the Agent ``payload`` (a flat ErrorPayload)."""

    payload: dict[str, Any]


def needs_translation(agent: Line, computer: Line) -> bool:
    """Whether an Agent on ``agent`` and a Computer on ``computer`` need the Server's help."""
    return agent != computer


def translate_request(event: str, payload: Any, *, agent: Line, computer: Line) -> Any:
    """An Agent's ``client:*`` request in the Computer's shapes, or a :class:`Refusal`.

    Refused: ``client:put_blob`` to a 0.2 Computer (4019, ``details.reason`` =
    ``"unsupported"``): 0.2 has no uploads, so it is answered at once instead of timing out.
    """
    if agent == computer:
        return payload
    if event == PUT_BLOB_EVENT and computer == LINE_0_2:
        return Refusal(
            {
                "code": _BLOB_WRITE_FAILED,
                "message": "This Computer speaks protocol 0.2, which has no client:put_blob",
                "details": {"reason": "unsupported", "computer_protocol": computer},
            }
        )
    tool_call = event == "client:tool_call" and isinstance(payload, dict)
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
    if event == "client:get_tools" and "tools" in answer:
        convert = _shapes.tools_04_to_02 if to_02 else _shapes.tools_02_to_04
        return {**answer, "tools": convert(answer["tools"])}
    if event == "client:get_config":
        return _shapes.config_04_to_02(answer) if to_02 else _shapes.config_02_to_04(answer)
    return answer
