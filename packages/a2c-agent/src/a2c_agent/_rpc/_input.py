"""Input requests during a tool call, the Agent's side: asking the handler, round by round.

A call made with an input handler declares the extension (``a2c_input``); when the
Computer answers it with an input-required result, :func:`answer_round` asks the handler
about each request, one at a time in the order given, and the call is made again with the
answers and the state (:func:`input_rounds`, run by ``RequestsMixin.call_tool``). The
handler is a plain or a coroutine function; a plain one runs in a worker thread, so a prompt
on a terminal does not stop the Agent's connection. Rules:

* the answer must suit the request: an :class:`~a2c_protocol.ElicitationResponse` for an
  elicitation, a :class:`~a2c_protocol.SamplingResponse` for a sampling, a
  :class:`~a2c_protocol.RootsResponse` for roots; an :class:`~a2c_protocol.InputRefusal`
  suits every one. Anything else is the caller's bug: ``TypeError``;
* when the handler fails (or the call is cancelled while it waits), the Computer is told in
  one more round that every request was cancelled, so the MCP server stops at once instead
  of waiting for the Computer's expiry; that round's answer is not waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from a2c_agent._exceptions import InputRoundsExceededError
from a2c_protocol import (
    CallToolResult,
    ElicitationRequest,
    ElicitationResponse,
    InputCapabilities,
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
from a2c_protocol._input import (
    decline_for,
    response_to_wire,
)

__all__ = [
    "DEFAULT_MAX_INPUT_ROUNDS",
    "InputHandler",
    "Round",
    "answer_round",
    "cancel_round",
    "decline_input",
    "input_rounds",
]

logger = logging.getLogger("a2c_agent")

#: A tool may ask again after each answer; past this many rounds the call is given up.
DEFAULT_MAX_INPUT_ROUNDS = 10

#: Seconds a cancelled call waits for the Computer to hear that its input requests are off.
ABANDON_WAIT = 5.0

#: ``handler(request) -> response``, a plain or a coroutine function.
InputHandler: TypeAlias = Callable[[InputRequest], "Awaitable[InputResponse] | InputResponse"]

#: One round of a call: ``once(req_id, extra request keys) -> its result or its requests``.
Round: TypeAlias = Callable[
    [str, "dict[str, Any] | None"], "Awaitable[CallToolResult | InputRequired]"
]

_SUITS: dict[type[Any], type[Any]] = {
    ElicitationRequest: ElicitationResponse,
    SamplingRequest: SamplingResponse,
    RootsRequest: RootsResponse,
}


async def decline_input(request: InputRequest) -> InputResponse:
    """A handler that answers no to everything: ``decline`` for an elicitation, a refusal
    for the rest (what a call without a handler gets from the Computer, but as the
    Agent's own answer)."""
    return decline_for(request, "declined by the Agent")


async def _ask(handler: InputHandler, request: InputRequest) -> InputResponse:
    if inspect.iscoroutinefunction(handler):
        response: Any = await handler(request)
    else:
        response = await asyncio.to_thread(handler, request)
        if inspect.isawaitable(response):
            response = await response
    wanted = _SUITS[type(request)]
    if not isinstance(response, wanted | InputRefusal):
        raise TypeError(
            f"the input handler answered a {request.method} request with {response!r}; "
            f"expected a {wanted.__name__} or an InputRefusal"
        )
    return response


async def answer_round(handler: InputHandler, required: InputRequired) -> dict[str, Any]:
    """``a2c_input_responses`` for one input-required answer: the handler's, key by key."""
    return {r.key: response_to_wire(await _ask(handler, r)) for r in required.requests}


def cancel_round(required: InputRequired) -> dict[str, Any]:
    """``a2c_input_responses`` that cancel every request of ``required``."""
    return {
        r.key: response_to_wire(
            ElicitationResponse.cancel()
            if isinstance(r, ElicitationRequest)
            else InputRefusal(f"{r.method} cancelled by the Agent")
        )
        for r in required.requests
    }


async def input_rounds(
    once: Round,
    req_id: str,
    origin: InputOrigin,
    handler: InputHandler,
    *,
    capabilities: InputCapabilities,
    max_rounds: int,
) -> CallToolResult:
    """The rounds of a call that takes input, the first one made with ``req_id``: each
    input-required answer is put to ``handler`` and the call made again, until the result."""
    declared = {"a2c_input": capabilities.to_wire()}
    answer = await once(req_id, declared)
    rounds = 0
    while isinstance(answer, InputRequired):
        rounds += 1
        # Given up: tell the Computer now rather than leave the MCP server waiting for
        # expiry. The caller hears of it after the Computer answered that round (when
        # this task is being cancelled, after ABANDON_WAIT at most: a process that exits
        # at once would lose the round in its send queue).
        if rounds > max_rounds:
            await _abandon(once, req_id, declared, answer)
            raise InputRoundsExceededError(origin.computer, origin.tool, max_rounds)
        try:
            responses = await answer_round(handler, answer)
        except Exception:
            await _abandon(once, req_id, declared, answer)
            raise
        except BaseException:
            with contextlib.suppress(TimeoutError):
                await asyncio.shield(
                    asyncio.wait_for(_abandon(once, req_id, declared, answer), ABANDON_WAIT)
                )
            raise
        answer = await once(f"{req_id}.{rounds + 1}", _resume(declared, answer, responses))
    return answer


def _resume(
    declared: dict[str, Any], required: InputRequired, responses: dict[str, Any]
) -> dict[str, Any]:
    """The retry's keys: the extension declared, the answers and the state unchanged."""
    return {**declared, "a2c_input_responses": responses, "a2c_request_state": required.state}


async def _abandon(
    once: Round, req_id: str, declared: dict[str, Any], required: InputRequired
) -> None:
    """The round cancelling every request of an abandoned call (``<req_id>.x``); its
    answer is of no use to anyone."""
    rid = f"{req_id}.x"
    try:
        await once(rid, _resume(declared, required, cancel_round(required)))
    except Exception as exc:  # the Computer expires the state in the end
        logger.info("could not cancel the input requests of call %s: %s", rid, exc)
