"""Input requests from the office, put to the MCP host in the era it speaks.

A tool's MCP server asks during a call (elicitation: a form or a URL; sampling; roots); the
Computer hands the request to the Agent's call, and the Agent SDK's input handler
(``call_tool(on_input=...)``, its round loop) answers it. The bridge's handler asks the host:

* what the host may be asked is what it declared (``clientCapabilities``: a handshake-era
  host's ``initialize``, a 2026-07-28 host's request ``_meta``), and the office is told
  that much and no more (the call's ``a2c_input``); a host that declared no elicitation
  and no sampling makes a call without a handler, and the Computer declines for it, as
  before; a kind the host did not declare, asked anyway by a Computer, is declined by the
  SDK's rounds before this handler (and by the handler, should one get through), as are
  URLs that are not web links and rounds over the SDK's caps;
* a handshake-era host is sent the bridge's own ``elicitation/create`` /
  ``sampling/createMessage`` / ``roots/list`` request, on the stream of its call, and its
  answer goes back (a URL-mode elicitation gets an ``elicitationId`` when it has none, as
  2025-11-25 requires); an error or no answer within ``--input-timeout`` is a refusal;
* a 2026-07-28 host has no back channel: the call goes on in the background, parked
  (:mod:`._parked`), and the host is answered ``InputRequiredResult`` with the request
  under the office's key and a ``requestState``; its retry with ``inputResponses`` and
  that ``requestState`` hands the answer to the waiting call, which then ends (the tool's
  result) or asks again (a new ``InputRequiredResult``). A call whose host does not come
  back within ``--input-timeout`` is cancelled (the Computer hears it at once);
* the MCP params pass through as the MCP server wrote them; a URL is shown by the host,
  never opened by the bridge.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
from mcp import MCPError, types
from mcp.server import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from a2c_agent._rpc._input import InputHandler
from a2c_protocol import (
    ElicitationRequest,
    InputCapabilities,
    InputRefusal,
    InputRequest,
    InputResponse,
    InvalidPayloadError,
    RootsRequest,
    SamplingRequest,
)
from a2c_protocol._input import decline_for, response_from_wire

from ._parked import Binding, ParkingLot, Refusal, binding_of

__all__ = [
    "HostInputs",
    "host_capabilities",
    "host_takes",
    "input_capabilities_of",
    "is_handshake",
    "mcp_request",
]

logger = logging.getLogger("a2c_agent.bridge")

#: The MCP result of an office call: a ``CallToolResult`` as JSON.
Result = dict[str, Any]
#: Runs the office call with this input handler.
OfficeCall = Callable[[InputHandler], Awaitable[Result]]

_REQUESTS: dict[
    str, type[types.ElicitRequest | types.CreateMessageRequest | types.ListRootsRequest]
] = {
    "elicitation/create": types.ElicitRequest,
    "sampling/createMessage": types.CreateMessageRequest,
    "roots/list": types.ListRootsRequest,
}
_RESULTS: dict[type[Any], type[types.Result]] = {
    ElicitationRequest: types.ElicitResult,
    SamplingRequest: types.CreateMessageResult,
    RootsRequest: types.ListRootsResult,
}


def is_handshake(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the request came from a handshake-era host (it can be sent requests)."""
    return ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS


def host_capabilities(ctx: ServerRequestContext[Any]) -> InputCapabilities | None:
    """What the host of this request can answer; None when it can answer nothing."""
    return input_capabilities_of(ctx.session.client_capabilities)


def input_capabilities_of(declared: types.ClientCapabilities | None) -> InputCapabilities | None:
    """What a host declaring ``declared`` can answer; None when it can answer nothing."""
    if declared is None or (declared.elicitation is None and declared.sampling is None):
        return None
    # Read from the model (no dump: this runs on every call). As in MCP, an elicitation
    # capability naming no mode means forms.
    elicit, sampling = declared.elicitation, declared.sampling
    return InputCapabilities(
        form=elicit is not None and (elicit.form is not None or elicit.url is None),
        url=elicit is not None and elicit.url is not None,
        sampling=sampling is not None,
        sampling_tools=sampling is not None and sampling.tools is not None,
    )


def host_takes(request: InputRequest, taken: InputCapabilities, *, roots: bool) -> bool:
    """Whether the host may be asked ``request``: a kind it declared (``taken``; ``roots``:
    it declared roots). Roots are the Computer's own (its configuration); one that reaches
    the Agent anyway is put to a host that declared roots."""
    return roots if isinstance(request, RootsRequest) else taken.takes(request)


def mcp_request(request: InputRequest, *, handshake: bool) -> dict[str, Any]:
    """The MCP request (``method``, ``params``) of an office input request."""
    params = dict(request.params)
    if handshake and isinstance(request, ElicitationRequest) and request.mode == "url":
        params.setdefault("elicitationId", uuid.uuid4().hex)
    elif not handshake:
        params.pop("elicitationId", None)  # not in 2026-07-28
    return {"method": request.method, "params": params}


def _answer(request: InputRequest, data: Any) -> InputResponse:
    """The office's typed answer of a host's JSON answer (InvalidPayloadError if wrong)."""
    answer: InputResponse = response_from_wire(
        request.method, data, f"$.inputResponses.{request.key}"
    )
    return answer


def _declined(request: InputRequest, why: str) -> InputResponse:
    answer: InputResponse = decline_for(request, why)
    return answer


def _unsupported(request: InputRequest) -> InputResponse:
    return _declined(request, "is not supported by the MCP host")


def _roots_declared(ctx: ServerRequestContext[Any]) -> bool:
    declared = ctx.session.client_capabilities
    return declared is not None and declared.roots is not None


def ask_handshake_host(
    ctx: ServerRequestContext[Any], taken: InputCapabilities, timeout: float
) -> InputHandler:
    """An input handler sending each request to the handshake-era host of ``ctx``."""
    session, related = ctx.session, ctx.request_id
    roots = _roots_declared(ctx)

    async def ask(request: InputRequest) -> InputResponse:
        if not host_takes(request, taken, roots=roots):
            return _unsupported(request)
        wire = mcp_request(request, handshake=True)
        result_type = _RESULTS[type(request)]
        if isinstance(request, SamplingRequest) and request.wants_tools:
            result_type = types.CreateMessageResultWithTools
        try:
            typed = _REQUESTS[request.method].model_validate(wire)
            result = await session.send_request(
                typed,
                result_type,
                request_read_timeout_seconds=timeout,
                metadata=ServerMessageMetadata(related_request_id=related),
            )
        except MCPError as exc:
            return InputRefusal(f"the MCP host refused {request.method}: {exc.error.message}")
        except TimeoutError:
            return InputRefusal(f"the MCP host did not answer {request.method} in {timeout:g} s")
        except ValueError as exc:  # pydantic: a request or an answer MCP's types refuse
            return InputRefusal(f"{request.method} could not be relayed to the MCP host: {exc}")
        try:
            return _answer(
                request, result.model_dump(by_alias=True, mode="json", exclude_none=True)
            )
        except InvalidPayloadError as exc:
            return InputRefusal(f"the MCP host's answer to {request.method} is not valid: {exc}")

    return ask


@attrs.define(eq=False)
class _Waiting:
    """An office call of a 2026-07-28 host that may wait for the host's answers."""

    #: the served tool name and the arguments of the call (its binding once it parks)
    tool: str
    arguments: Mapping[str, Any] | None
    task: asyncio.Task[Result] | None = None
    question: asyncio.Future[tuple[InputRequest, asyncio.Future[InputResponse]]] = attrs.field(
        factory=lambda: asyncio.get_running_loop().create_future()
    )
    asked: tuple[InputRequest, asyncio.Future[InputResponse]] | None = None


class HostInputs:
    """The parked calls of 2026-07-28 hosts (see module rules)."""

    def __init__(self, *, timeout: float, capacity: int = 256) -> None:
        self.timeout = timeout
        self._lot: ParkingLot[_Waiting] = ParkingLot(ttl=timeout, capacity=capacity)

    async def start(
        self, ctx: ServerRequestContext[Any], tool: str, arguments: Mapping[str, Any] | None,
        taken: InputCapabilities, call: OfficeCall,
    ) -> Result | types.InputRequiredResult:  # fmt: skip
        """Run ``call`` (of ``tool`` with ``arguments``) for a 2026-07-28 host: its result,
        or an ``InputRequiredResult``."""
        waiting = _Waiting(tool, arguments)
        roots = _roots_declared(ctx)

        async def ask(request: InputRequest) -> InputResponse:
            if not host_takes(request, taken, roots=roots):
                return _unsupported(request)
            if self._lot.full():
                logger.warning("declined %s: %d calls already wait for their host",
                               request.method, len(self._lot))  # fmt: skip
                return _declined(request, "declined: too many calls wait for their host")
            answer: asyncio.Future[InputResponse] = asyncio.get_running_loop().create_future()
            waiting.question.set_result((request, answer))
            response: InputResponse = await answer
            return response

        waiting.task = asyncio.ensure_future(call(ask))
        # The office call may end while parked (the Computer gave it up, its Agent round
        # timed out): its parked copy goes with it, not at this bridge's own expiry.
        waiting.task.add_done_callback(lambda task: self._ended(waiting, task))
        return await self._next(waiting)

    async def resume(self, token: str, binding: Binding, responses: dict[str, Any] | None) -> Any:
        """Hand a host's ``inputResponses`` to the call parked under ``token``."""
        claimed = self._lot.claim(token, binding)
        if claimed is Refusal.UNKNOWN:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message="requestState is unknown or expired (its call was given up, or "
                "answered already): call the tool again without it",
            )
        if claimed is Refusal.MISMATCH:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message="requestState was issued for another call: retry with the tool "
                "name and arguments of the call that got it",
            )
        waiting = claimed
        assert waiting.asked is not None
        request, answer = waiting.asked
        try:
            typed = _answer(request, (responses or {}).get(request.key))
        except InvalidPayloadError as exc:
            self._give_up(waiting, "its host's answer was not valid")
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"inputResponses[{request.key!r}] does not answer {request.method}: "
                f"{exc}; the call was cancelled: call the tool again",
            ) from None
        answer.set_result(typed)
        return await self._next(waiting)

    async def _next(self, waiting: _Waiting) -> Result | types.InputRequiredResult:
        """Wait for the call to end or to ask; park it when it asks."""
        assert waiting.task is not None
        try:
            either: set[asyncio.Future[Any]] = {waiting.task, waiting.question}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the host gave up its request
            self._give_up(waiting, "its host went away")
            raise
        if not waiting.question.done():
            self._lot.drop(waiting)
            return waiting.task.result()
        waiting.asked = waiting.question.result()
        waiting.question = asyncio.get_running_loop().create_future()
        request = waiting.asked[0]
        # The digest of the arguments only for a call that asks: most never do.
        token = self._lot.park(waiting, binding_of(waiting.tool, waiting.arguments))
        asyncio.get_running_loop().call_later(self.timeout + 0.05, self._expire)
        wire = mcp_request(request, handshake=False)
        return types.InputRequiredResult(
            input_requests={request.key: _REQUESTS[request.method].model_validate(wire)},
            request_state=token,
        )

    def _ended(self, waiting: _Waiting, task: asyncio.Task[Result]) -> None:
        self._lot.drop(waiting)
        failed = None if task.cancelled() else task.exception()  # read: never "unretrieved"
        if failed is not None and waiting.asked is not None:
            logger.info("call of %s ended while its host was asked: %s", waiting.tool, failed)

    def _expire(self) -> None:
        for waiting in self._lot.expired():
            self._give_up(waiting, f"its host did not answer within {self.timeout:g} s")

    def _give_up(self, waiting: _Waiting, why: str) -> None:
        self._lot.drop(waiting)
        if waiting.task is not None and not waiting.task.done():
            logger.info("call of %s cancelled: %s", waiting.tool, why)
            waiting.task.cancel()

    def close(self) -> None:
        """Cancel every parked call (the bridge stops)."""
        for waiting in self._lot.take_all():
            self._give_up(waiting, "the bridge stops")
