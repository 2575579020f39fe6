"""The seam where an MCP server's input requests (elicitation, sampling, roots) get answered.

An MCP server asks for input during a request in one of two ways, by era:

* handshake era: a server-initiated request (``elicitation/create``,
  ``sampling/createMessage``, ``roots/list``) while the tool call is in flight. The MCP
  client session answers it through the callbacks of :class:`InputCallbacks`, given to
  :class:`~._server.McpServer` (``inputs=``); the session also declares the matching client
  capabilities in ``initialize`` only for the callbacks given.
* 2026-07-28: the tool call's *result* is ``{"resultType": "input_required",
  "inputRequests": {...}, "requestState": "..."}``; the client answers by calling the tool
  again with ``inputResponses`` and the ``requestState`` unchanged
  (``McpServer.call_tool(..., input_responses=, request_state=)``). The capabilities of
  :class:`InputCallbacks` are declared on every request's ``_meta`` too, so a
  resolver-based tool knows what it may ask.

Without callbacks nothing is declared: a handshake-era server gets mcp's own refusal of
each request ("... not supported"), and a 2026-07-28 ``input_required`` result becomes
:data:`NO_INPUT` (a clear failure of the call) unless the caller of ``call_tool`` takes
such results (``allow_input_required=True``) to answer them itself. The Computer gives
every server the callbacks of :mod:`a2c_computer._asks`, which relays them to the
calling Agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mcp.client.session import ElicitationFnT, ListRootsFnT, SamplingFnT

from a2c_protocol import JsonObject
from a2c_protocol._input import ELICIT, INPUT_REQUIRED, LIST_ROOTS, SAMPLE

__all__ = ["INPUT_REQUIRED", "NO_INPUT", "InputCallbacks", "input_kinds"]

#: What a tool call that asked for input fails with when nobody can answer it.
NO_INPUT: Final = (
    "the tool asked for input ({kinds}) during the call, but its caller takes no questions "
    "(an Agent without an input handler, or an MCP host without elicitation or sampling "
    "support), so the call cannot go on"
)

_KINDS: Final = {
    ELICIT: "elicitation",
    SAMPLE: "sampling",
    LIST_ROOTS: "roots",
}


@dataclass(frozen=True, slots=True)
class InputCallbacks:
    """What answers an MCP server's input requests (each None: not supported).

    ``sampling_tools``: with ``sampling``, also declare sampling with tools.
    """

    elicitation: ElicitationFnT | None = None
    sampling: SamplingFnT | None = None
    list_roots: ListRootsFnT | None = None
    sampling_tools: bool = False


def input_kinds(result: JsonObject) -> str:
    """``"elicitation, sampling"``: what an ``input_required`` result asks for."""
    requests = result.get("inputRequests")
    methods = (
        sorted({str(r.get("method")) for r in requests.values() if isinstance(r, dict)})
        if isinstance(requests, dict)
        else []
    )
    return ", ".join(_KINDS.get(m, m) for m in methods) or "no request named"
