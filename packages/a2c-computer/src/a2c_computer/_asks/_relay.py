"""The Computer's relay of input requests: who asks, the pending states, the rounds, and
the words of each refusal (pure functions, at the end of the module).

Rules (docs/compatibility.md, *input requests*; the state binding and expiry are the core's
:class:`~a2c_protocol.PendingInputs`):

* handshake era: a server-initiated request belongs to the one tool call running on that
  MCP server (the protocol does not say which call asks); none, or several, and it is
  refused, as it is when that call's Agent did not declare ``a2c_input``, did not declare
  this kind, or the request is a form asking for a secret. A refusal is a JSON-RPC error
  naming the cause, and one INFO line;
* 2026-07-28: an ``input_required`` result is split: roots are answered here, the rest
  goes to the Agent when its call declared it, else the call ends with an error result
  naming what the tool asked for;
* a round that ends asking answers the Agent with the requests and a new state, valid
  ``ttl`` seconds; on expiry, or when the Agent leaves, the MCP call is cancelled and its
  waiting requests refused, with one INFO line naming the call;
* a retry is checked (:meth:`PendingInputs.peek`, then the answers): a refused retry is a
  flat 400 whose ``details.reason`` says why, and a state whose answers were refused stays;
* bounds (the core's :mod:`a2c_protocol._input._limits`), whoever the MCP server is: a
  round carries at most ``per_round`` requests (in the handshake era: requests the server
  waits on at once), a call at most ``per_call`` in all, and a URL-mode request a web link
  only. Past a count bound the requests are refused to the MCP server, the call ends with
  an error naming the bound (a retry of its state too), and one WARNING line names it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from typing import Final, cast

import attrs
from mcp import types

from a2c_computer._mcp import InputCallbacks
from a2c_computer._toolcalls._confirm import error_result
from a2c_computer._toolcalls._extensions import InputAnswer, InputAsk, ProgressFn
from a2c_computer._toolcalls._invoke import McpInputRequired
from a2c_protocol import (
    CallToolResult,
    ElicitationResponse,
    ErrorCode,
    InputRefusal,
    InputResponse,
    InvalidPayloadError,
    JsonObject,
    timeout_result,
)
from a2c_protocol._input import (
    DEFAULT_MAX_REQUESTS_PER_CALL,
    DEFAULT_MAX_REQUESTS_PER_ROUND,
    ELICIT,
    LIST_ROOTS,
    SAMPLE,
    PendingInputs,
    StateRefusal,
    call_refusal,
    input_request_of,
    input_required_answer,
    round_refusal,
)

from ._answers import (
    HandshakeAnswer,
    check_answers,
    handshake_answer,
    modern_answer,
    refused_unasked,
    request_of,
)
from ._call import AskingCall
from ._roots import roots_json

__all__ = ["DEFAULT_INPUT_TIMEOUT", "InputRelay"]

logger = logging.getLogger("a2c_computer")

#: Seconds a request waits for the Agent's answer (``--input-timeout``).
DEFAULT_INPUT_TIMEOUT: Final = 300.0
#: 2026-07-28 rounds the Computer answers alone (roots) before giving up on a tool.
_LOCAL_ROUNDS: Final = 10


@attrs.define
class _Pending:
    call: AskingCall
    asked: dict[str, JsonObject]
    modern_state: str | None = None
    local: dict[str, JsonObject] = attrs.Factory(dict)
    modern: bool = False


class InputRelay:
    """Pending input requests of this Computer and the calls running on each MCP server."""

    def __init__(
        self,
        ttl: float,
        roots_of: Callable[[str], list[str] | None],
        *,
        per_round: int = DEFAULT_MAX_REQUESTS_PER_ROUND,
        per_call: int = DEFAULT_MAX_REQUESTS_PER_CALL,
    ) -> None:
        self._table: PendingInputs[_Pending] = PendingInputs(ttl)
        self._roots_of = roots_of
        self.per_round, self.per_call = per_round, per_call
        #: MCP server → its tool calls running now (a ``req_id``: a call that takes no input).
        self.running: dict[str, list[AskingCall | str]] = {}
        #: The servers with configured roots (in 2026-07-28 their plain calls come here too).
        self.rooted: frozenset[str] = frozenset()
        self._timer: asyncio.TimerHandle | None = None

    @property
    def ttl(self) -> float:
        return self._table.ttl

    # ------------------------------------------------------- the MCP sessions' side

    def callbacks(self, server: str) -> InputCallbacks:
        """What answers ``server``'s requests (roots only when it has some configured)."""

        async def elicit(
            context: object, params: types.ElicitRequestParams
        ) -> types.ElicitResult | types.ErrorData:
            answer = await self._asked(server, request_of(ELICIT, params))
            return cast("types.ElicitResult | types.ErrorData", answer)

        async def sample(
            context: object, params: types.CreateMessageRequestParams
        ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
            answer = await self._asked(server, request_of(SAMPLE, params))
            return cast(
                "types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData",
                answer,
            )

        async def roots(context: object) -> types.ListRootsResult | types.ErrorData:
            listed = self._roots_of(server)
            if listed is None:  # removed by a reload since the session declared it
                return types.ErrorData(code=types.INVALID_REQUEST, message="no roots")
            return types.ListRootsResult.model_validate({"roots": roots_json(listed)})

        return InputCallbacks(
            elicitation=elicit,
            sampling=sample,
            list_roots=roots if self._roots_of(server) is not None else None,
            sampling_tools=True,
        )

    async def _asked(self, server: str, request: JsonObject) -> HandshakeAnswer:
        calls = self.running.get(server) or []
        call = calls[0] if len(calls) == 1 else None
        refusal: str | None
        if not calls:
            refusal = "no tool call is running on this MCP server"
        elif len(calls) > 1:
            refusal = which_asks(calls)
        elif not isinstance(call, AskingCall):
            refusal = NO_INPUT
        else:
            refusal = refused_unasked(request) or not_taken(call, request)
        if refusal is None and isinstance(call, AskingCall):
            over = round_refusal(call.waiting + 1, self.per_round) or call_refusal(
                call.asked_total + 1, self.per_call
            )
            if over is None and call.given_up:
                over = GIVEN_UP
            if over is None:
                return await call.ask(request)
            self._over(call, over)
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message=f"{request['method']} refused by the A2C Computer: {over}",
            )
        logger.info("MCP server %s asked for %s: refused, %s", server, request["method"], refusal)
        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message=f"{request['method']} refused by the A2C Computer: {refusal}",
        )

    def enter(self, server: str, call: AskingCall | str) -> None:
        """A tool call starts on ``server`` (the handshake era asks it, see above)."""
        self.running.setdefault(server, []).append(call)

    def leave(self, server: str, call: AskingCall | str) -> None:
        calls = self.running.get(server)
        if calls is not None:
            calls.remove(call)
            if not calls:
                del self.running[server]

    # ---------------------------------------------------------------- the rounds

    async def first_round(
        self, call: AskingCall, ask: InputAsk | None, timeout: float, forward: ProgressFn | None
    ) -> CallToolResult | InputAnswer:
        """Start ``call``'s MCP call and run its first round (``ask`` None: a call that takes
        no input, on a server whose roots are answered here)."""
        self.enter(call.server, call)
        call.start()
        return await self._round(call, ask, timeout, forward)

    async def resume(
        self, ask: InputAsk, timeout: float, forward: ProgressFn | None
    ) -> CallToolResult | InputAnswer:
        """A retry: check its state and answers, hand them on, run the next round."""
        assert ask.state is not None
        now = asyncio.get_running_loop().time()
        self._sweep(now)
        pending = self._table.peek(ask.state, ask.binding, now)
        if isinstance(pending, StateRefusal):
            return refused(pending.reason, pending.message)
        answers = check_answers(pending.asked, ask.responses)
        if isinstance(answers, str):
            return refused("input_responses_invalid", answers)
        self._table.take(ask.state)
        call = pending.call
        if call.ended is not None:  # a bound passed, or its server went, after the state
            return failed(call, call.ended)
        call.waiting_until = None
        # Every request cancelled or refused: the Agent's side gave the questions up (our
        # SDK's answer when its handler fails or its call is cancelled). The tool hears
        # it; should it ask again, the call ends rather than wait for nobody.
        call.given_up = all(gives_up(r) for r in answers.values())
        if not pending.modern:
            call.answer({k: handshake_answer(pending.asked[k], r) for k, r in answers.items()})
        else:
            merged = dict(pending.local)
            for key, response in answers.items():
                value = modern_answer(pending.asked[key], response)
                if isinstance(value, str):
                    self._finish(call, value)
                    return failed(call, value)
                merged[key] = value
            call.start((merged, pending.modern_state))
        return await self._round(call, ask, timeout, forward)

    async def _round(
        self, call: AskingCall, ask: InputAsk | None, timeout: float, forward: ProgressFn | None
    ) -> CallToolResult | InputAnswer:
        local_rounds = 0
        try:
            while True:
                outcome = await call.next(timeout, forward)
                if isinstance(outcome, str):
                    self._finish(call, None)
                    return failed(call, outcome)
                if isinstance(outcome, CallToolResult):
                    self._finish(call, None)
                    return outcome
                if not isinstance(outcome, McpInputRequired):  # handshake-era requests
                    if call.given_up:  # asked before the give-up, queued since: not put
                        self._over(call, GIVEN_UP)
                        return failed(call, GIVEN_UP)
                    return self._open(ask, _Pending(call, outcome))
                split = self._split(call, outcome.raw)
                if isinstance(split, str):
                    if call.ended is None:  # a bound logged its own line already
                        logger.info("MCP server %s, tool %s: %s; the call is ended",
                                    call.server, call.tool, split)  # fmt: skip
                    self._finish(call, split)
                    return failed(call, split)
                to_agent, local, state = split
                if to_agent and call.given_up:
                    self._over(call, GIVEN_UP)
                    return failed(call, GIVEN_UP)
                if to_agent:
                    return self._open(ask, _Pending(call, to_agent, state, local, modern=True))
                local_rounds += 1
                if local_rounds > _LOCAL_ROUNDS:
                    why = f"the tool asked for roots more than {_LOCAL_ROUNDS} times in a row"
                    self._finish(call, why)
                    return failed(call, why)
                call.start((local, state))
        except TimeoutError:
            self._finish(call, f"the tool call timed out after {timeout:g} s")
            return timeout_result(
                f"Tool {call.tool!r} timed out after {timeout:g} s",
                extra={"mcp_server": call.server},
            )
        except asyncio.CancelledError:
            self._finish(call, "the tool call was cancelled")
            raise

    def _split(
        self, call: AskingCall, raw: JsonObject
    ) -> tuple[dict[str, JsonObject], dict[str, JsonObject], str | None] | str:
        """A 2026-07-28 ``input_required``: (to the Agent, answered here, state), or why not."""
        requests, state = raw.get("inputRequests") or {}, raw.get("requestState")
        count = len(requests) if isinstance(requests, dict) else 0
        call.asked_total += count
        over = round_refusal(count, self.per_round) or call_refusal(call.asked_total, self.per_call)
        if over is not None:
            self._over(call, over)
            return over
        to_agent: dict[str, JsonObject] = {}
        local: dict[str, JsonObject] = {}
        for key, request in requests.items() if isinstance(requests, dict) else ():
            if isinstance(request, dict) and request.get("method") == LIST_ROOTS:
                listed = self._roots_of(call.server)
                local[str(key)] = {"roots": roots_json(listed or [])}
                continue
            refusal = (refused_unasked(request) if isinstance(request, dict) else None) or (
                not_taken(call, request)
            )
            if refusal is not None:
                return f"the tool asked for input the call cannot give: {refusal}"
            to_agent[str(key)] = request
        return to_agent, local, state if isinstance(state, str) else None

    def _open(self, ask: InputAsk | None, pending: _Pending) -> InputAnswer | CallToolResult:
        if ask is None:  # pragma: no cover - such a call takes nothing: _split refused it
            self._finish(pending.call, "the call takes no input")
            return failed(pending.call, "the tool asked for input; the call takes none")
        loop = asyncio.get_running_loop()
        state = secrets.token_urlsafe(24)
        self._table.open(state, ask.binding, pending, loop.time())
        pending.call.waiting_until = time.time() + self.ttl
        self._schedule()
        wire = input_required_answer(
            pending.asked, state, mcp_server=pending.call.server, expires_in=self.ttl
        )
        return InputAnswer(wire, "input required")

    def _over(self, call: AskingCall, why: str) -> None:
        """A bound passed, or the Agent gave up: ``call``'s requests are refused, it ends."""
        if why is GIVEN_UP:
            logger.info("tool %s (Agent %s) asked again after its Agent gave its questions "
                        "up: the call is ended", call.tool, call.agent)  # fmt: skip
        else:
            logger.warning("MCP server %s asked too much during tool %s (Agent %s): %s; the "
                           "call is ended", call.server, call.tool, call.agent, why)  # fmt: skip
        self._finish(call, why)

    def _finish(self, call: AskingCall, reason: str | None) -> None:
        if reason is not None:
            call.end(reason)
        calls = self.running.get(call.server)
        if calls is not None and call in calls:
            self.leave(call.server, call)

    # -------------------------------------------------------- expiry and leaving

    def _schedule(self) -> None:
        due = self._table.next_deadline()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if due is not None:
            self._timer = asyncio.get_running_loop().call_at(due, self._expired)

    def _expired(self) -> None:
        self._timer = None
        self._sweep(asyncio.get_running_loop().time())
        self._schedule()

    def _sweep(self, now: float) -> None:
        for _, binding, pending in self._table.expire(now):
            self._finish(pending.call, f"the Agent did not answer within {self.ttl:g} s")
            logger.info(
                "input requests of tool %s (Agent %s) expired after %g s: the tool call is "
                "cancelled", binding.tool, binding.agent, self.ttl,
            )  # fmt: skip

    def agent_left(self, agent: str) -> None:
        """An Agent left the office: its waiting calls are cancelled."""
        for _, binding, pending in self._table.drop(lambda b: b.agent == agent):
            self._finish(pending.call, f"Agent {agent} left")
            logger.info("input requests of tool %s: Agent %s left, the call is cancelled",
                        binding.tool, agent)  # fmt: skip
        self._schedule()

    def close(self) -> None:
        """The Computer stops: every waiting call is cancelled."""
        for _, _, pending in self._table.drop(lambda b: True):
            self._finish(pending.call, "the Computer is stopping")
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


# -- why a request is refused or a call ends ------------------------------------------
#
# Pure: no I/O. A refusal names its cause in plain words (no protocol jargon a host's user
# cannot act on: the MCP server, the Agent and, through the tool's result, an MCP host's
# user read them) and, where several calls are involved, which call and what holds it.

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
