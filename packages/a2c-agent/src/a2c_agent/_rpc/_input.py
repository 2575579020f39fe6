"""Input requests during a tool call, the Agent's side: asking the handler, round by round.

A call made with an input handler declares the extension (``a2c_input``); when the
Computer answers it with an input-required result, :func:`answer_round` asks the handler
about each request, one at a time in the order given, and the call is made again with the
answers and the state (see ``RequestsMixin._call_tool``). The handler is a plain or a
coroutine function; a plain one runs in a worker thread, so a prompt on a terminal does not
stop the Agent's connection. Rules:

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
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from a2c_protocol import (
    ElicitationRequest,
    ElicitationResponse,
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
    "answer_round",
    "cancel_round",
    "decline_input",
]

#: A tool may ask again after each answer; past this many rounds the call is given up.
DEFAULT_MAX_INPUT_ROUNDS = 10

#: ``handler(request) -> response``, a plain or a coroutine function.
InputHandler: TypeAlias = Callable[[InputRequest], "Awaitable[InputResponse] | InputResponse"]

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
