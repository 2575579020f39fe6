"""Why the Computer refuses an input request or ends a call that asks, in the words the MCP
server, the Agent and (through the tool's result) an MCP host's user read. Pure: no I/O.

Rules: a refusal names its cause in plain words (no protocol jargon a host's user cannot
act on) and, where several calls are involved, which call and what holds it.
"""

from __future__ import annotations

from typing import Final

from a2c_computer._toolcalls._confirm import error_result
from a2c_computer._toolcalls._extensions import InputAnswer
from a2c_protocol import (
    CallToolResult,
    ElicitationResponse,
    ErrorCode,
    InputRefusal,
    InputResponse,
    InvalidPayloadError,
)
from a2c_protocol._input import ELICIT, SAMPLE, input_request_of

from ._call import AskingCall

__all__ = [
    "GIVEN_UP",
    "NO_INPUT",
    "failed",
    "gives_up",
    "not_taken",
    "refused",
    "which_asks",
]

#: Read by an MCP host's user as much as by an MCP server: plain words, and the way out.
NO_INPUT: Final = (
    "the caller of this tool takes no questions during the call (an Agent without an input "
    "handler, or an MCP host without elicitation or sampling support)"
)
GIVEN_UP: Final = (
    "the Agent gave this call's questions up (it cancelled or refused every request of the "
    "last round) and the tool asked again"
)


def gives_up(response: InputResponse) -> bool:
    """Whether an answer gives its request up (a cancel or a refusal, not a decline)."""
    return isinstance(response, InputRefusal) or (
        isinstance(response, ElicitationResponse) and response.action == "cancel"
    )


def which_asks(calls: list[AskingCall | str]) -> str:
    """The refusal while several calls run: which ones, and what holds each."""
    named = [c.describe() if isinstance(c, AskingCall) else f"call {c}, which takes no input"
             for c in calls[:4]]  # fmt: skip
    more = f"; and {len(calls) - 4} more" if len(calls) > 4 else ""
    return (f"{len(calls)} tool calls are running on this MCP server and the Computer cannot "
            f"tell which one asks: " + "; ".join(named) + more)  # fmt: skip


def not_taken(call: AskingCall, request: object) -> str | None:
    """Why ``call`` cannot take ``request`` (None: it can)."""
    takes = call.takes
    if not (takes.form or takes.url or takes.sampling):
        return NO_INPUT
    try:
        typed = input_request_of("request", request)
    except InvalidPayloadError as exc:
        return f"a malformed request ({exc.errors[0].path}: {exc.errors[0].problem})"
    if call.takes.takes(typed):
        return None
    kind = {ELICIT: f"{getattr(typed, 'mode', 'form')} elicitation",
            SAMPLE: "sampling with tools" if call.takes.sampling
            else "sampling"}.get(typed.method, typed.method)  # fmt: skip
    return f"the caller does not take {kind} during this call"


def refused(reason: str, message: str) -> InputAnswer:
    """A refused retry: a flat 400 whose ``details.reason`` says why."""
    wire = {"code": int(ErrorCode.BAD_REQUEST), "message": message, "details": {"reason": reason}}
    return InputAnswer(wire, f"refused: {reason}")


def failed(call: AskingCall, why: str) -> CallToolResult:
    """The error result of a call that asked and ended for ``why``."""
    return error_result(
        ErrorCode.TOOL_EXECUTION_FAILED, f"Tool {call.tool!r} failed: {why}", mcp_server=call.server
    )
