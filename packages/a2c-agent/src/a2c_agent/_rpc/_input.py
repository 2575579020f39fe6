"""Input requests during a tool call, the Agent's side: asking the handler, round by round.

A call made with an input handler declares the extension (``a2c_input``); when the
Computer answers it with an input-required result, :func:`answer_round` asks the handler
about each request, one at a time in the order given, and the call is made again with the
answers and the state (:func:`input_rounds`, run by ``Calls.call_tool``). The
handler is a plain or a coroutine function; a plain one runs in a worker thread, so a prompt
on a terminal does not stop the Agent's connection. Rules:

* the answer must suit the request: an :class:`~a2c_protocol.ElicitationResponse` for an
  elicitation, a :class:`~a2c_protocol.SamplingResponse` for a sampling, a
  :class:`~a2c_protocol.RootsResponse` for roots; an :class:`~a2c_protocol.InputRefusal`
  suits every one. Anything else is the caller's bug: ``TypeError``;
* when the handler fails (or the call is cancelled while it waits), the Computer is told in
  one more round that every request was cancelled, so the MCP server stops at once instead
  of waiting for the Computer's expiry; that round's answer is not waited for.

A Computer may be hostile, so before the handler hears of a round (:func:`screen_round`,
O(requests), nothing on a plain call):

* a round of more than ``max_per_round`` requests, or one that takes the call past
  ``max_per_call`` in all, is refused whole (the core's ``round_refusal`` /
  ``call_refusal``): no handler is asked, the Computer is told the requests are cancelled
  and the caller gets :class:`~a2c_agent.InputRequestsExceededError` naming the cap;
* a request of a kind the call did not declare (``InputCapabilities.takes``) is declined
  without asking, and a URL-mode request whose link is not ``https:`` (or ``http:`` to
  loopback) is refused with a message naming the scheme (``url_refusal``); one WARNING per
  call counts what was answered so;
* the handler is waited for until the round's ``expires_in`` (the Computer's keeping time)
  and no longer: then the requests are cancelled and the caller gets
  :class:`~a2c_agent.InputTimeoutError`. While it runs, :func:`input_deadline` says by
  when (a prompt shows it).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
import math
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

import attrs

from a2c_agent._exceptions import (
    InputRequestsExceededError,
    InputRoundsExceededError,
    InputTimeoutError,
)
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
    call_refusal,
    decline_for,
    response_to_wire,
    round_refusal,
    url_refusal,
)

__all__ = [
    "DEFAULT_MAX_INPUT_ROUNDS",
    "InputHandler",
    "InputLimits",
    "Round",
    "Screened",
    "answer_round",
    "cancel_round",
    "decline_input",
    "input_deadline",
    "input_rounds",
    "screen_round",
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

#: When (``time.time()``) the request being put to the handler expires; None: not said.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "a2c_input_deadline", default=None
)


def input_deadline() -> float | None:
    """While an input handler runs: the wall-clock time (``time.time()``) by which the
    Computer wants its answer, or None when it said nothing."""
    return _DEADLINE.get()


@attrs.frozen(kw_only=True)
class InputLimits:
    """What one call takes from a Computer: rounds, requests per round, requests in all."""

    rounds: int
    per_round: int
    per_call: int


@attrs.frozen
class Screened:
    """A round after :func:`screen_round`: what the handler is asked, and the answers the
    Agent gave itself (``refused``: key -> (response, why), in the round's order)."""

    ask: tuple[InputRequest, ...]
    refused: dict[str, tuple[InputResponse, str]]


def _kind(request: InputRequest) -> str:
    if isinstance(request, ElicitationRequest):
        return f"{request.mode} elicitation"
    if isinstance(request, SamplingRequest):
        return "sampling with tools" if request.wants_tools else "sampling"
    return request.method


def screen_round(required: InputRequired, capabilities: InputCapabilities) -> Screened:
    """Split a round into the requests the handler may be asked and those the Agent
    answers itself: kinds the call did not declare (declined), URL-mode links that are not
    web links (refused, naming the scheme)."""
    ask: list[InputRequest] = []
    refused: dict[str, tuple[InputResponse, str]] = {}
    for request in required.requests:
        if not capabilities.takes(request):
            why = f"{_kind(request)} was not declared"
            refused[request.key] = (decline_for(request, "was not declared by the Agent"), why)
        elif (
            isinstance(request, ElicitationRequest)
            and request.mode == "url"
            and (problem := url_refusal(request.url)) is not None
        ):
            message = f"{request.method} refused by the Agent: {problem}"
            refused[request.key] = (InputRefusal(message), problem)
        else:
            ask.append(request)
    return Screened(tuple(ask), refused)


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


async def answer_round(
    handler: InputHandler, required: InputRequired, screened: Screened | None = None
) -> dict[str, Any]:
    """``a2c_input_responses`` for one input-required answer: the handler's, key by key
    (the Agent's own where ``screened`` says so)."""
    if screened is None:
        return {r.key: response_to_wire(await _ask(handler, r)) for r in required.requests}
    asked = {r.key: await _ask(handler, r) for r in screened.ask}
    return {
        r.key: response_to_wire(asked[r.key] if r.key in asked else screened.refused[r.key][0])
        for r in required.requests
    }


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
    limits: InputLimits,
) -> CallToolResult:
    """The rounds of a call that takes input, the first one made with ``req_id``: each
    input-required answer is screened, put to ``handler`` and the call made again, until
    the result (see the module rules)."""
    declared = {"a2c_input": capabilities.to_wire()}
    answer = await once(req_id, declared)
    rounds = total = 0
    refused: Counter[str] = Counter()
    try:
        while isinstance(answer, InputRequired):
            rounds += 1
            # Given up: tell the Computer now rather than leave the MCP server waiting for
            # expiry. The caller hears of it after the Computer answered that round (when
            # this task is being cancelled, after ABANDON_WAIT at most: a process that
            # exits at once would lose the round in its send queue).
            if rounds > limits.rounds:
                await _abandon(once, req_id, declared, answer)
                raise InputRoundsExceededError(origin.computer, origin.tool, limits.rounds)
            count = len(answer.requests)
            total += count
            over = _over(origin, count, total, limits)
            if over is not None:
                logger.warning("call %s refused a round of input requests: %s", req_id, over)
                await _abandon(once, req_id, declared, answer)
                raise over
            screened = screen_round(answer, capabilities)
            for _, why in screened.refused.values():
                refused[why] += 1
            responses = await _answer_in_time(
                once, req_id, declared, answer, handler, screened, origin
            )
            answer = await once(f"{req_id}.{rounds + 1}", _resume(declared, answer, responses))
    finally:
        if refused:  # once per call, however many requests and rounds
            logger.warning(
                "call %s of %r on %r: answered %d input requests without asking the handler "
                "(%s)", req_id, origin.tool, origin.computer, sum(refused.values()),
                "; ".join(f"{n} x {why}" for why, n in refused.most_common(8)),
            )  # fmt: skip
    return answer


def _over(
    origin: InputOrigin, count: int, total: int, limits: InputLimits
) -> InputRequestsExceededError | None:
    why = round_refusal(count, limits.per_round)
    if why is not None:
        return InputRequestsExceededError(
            origin.computer, origin.tool, scope="round", count=count, cap=limits.per_round,
            reason=why,
        )  # fmt: skip
    why = call_refusal(total, limits.per_call)
    if why is not None:
        return InputRequestsExceededError(
            origin.computer, origin.tool, scope="call", count=total, cap=limits.per_call,
            reason=why,
        )  # fmt: skip
    return None


def _expiry(expires_in: float | None) -> float | None:
    """Seconds the handler is waited for: the Computer's ``expires_in`` (None: not said,
    or not a number of seconds)."""
    if expires_in is None or math.isnan(expires_in) or math.isinf(expires_in):
        return None
    return max(0.0, expires_in)


async def _answer_in_time(
    once: Round,
    req_id: str,
    declared: dict[str, Any],
    required: InputRequired,
    handler: InputHandler,
    screened: Screened,
    origin: InputOrigin,
) -> dict[str, Any]:
    """The round's answers, waited for until the round expires at the Computer."""
    expires_in = _expiry(required.expires_in) if screened.ask else None
    token = _DEADLINE.set(None if expires_in is None else time.time() + expires_in)
    try:
        async with asyncio.timeout(expires_in) as scope:
            return await answer_round(handler, required, screened)
    except TimeoutError:
        if not scope.expired():
            await _abandon(once, req_id, declared, required)
            raise  # the handler's own TimeoutError
        assert expires_in is not None
        logger.warning("call %s: the input handler did not answer within %g s (the round's "
                       "expires_in); its requests are cancelled", req_id, expires_in)  # fmt: skip
        await _abandon(once, req_id, declared, required)
        raise InputTimeoutError(origin.computer, origin.tool, expires_in) from None
    except Exception:
        await _abandon(once, req_id, declared, required)
        raise
    except BaseException:
        with contextlib.suppress(TimeoutError):
            await asyncio.shield(
                asyncio.wait_for(_abandon(once, req_id, declared, required), ABANDON_WAIT)
            )
        raise
    finally:
        _DEADLINE.reset(token)


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
