"""The MCP client side of the Computer: the thin adapter around the ``mcp`` client library.

What it does, and nothing more:

* opens a transport chosen from a dict keyed by config type (stdio, Streamable HTTP, SSE):
  :mod:`._transports`;
* speaks the MCP era chosen per server (the handshake when the server answers it, else
  2026-07-28; ``mcp_era`` pins one): :mod:`._era`; in 2026-07-28 keeps the
  ``subscriptions/listen`` stream of change notifications open: :mod:`._listen`;
* the seam where an MCP server's input requests (elicitation, sampling, roots) are
  answered, in either era: :mod:`._inputs` (the callbacks are :mod:`a2c_computer._asks`'s);
* runs one MCP server per owner task, restarts a lost one with backoff, keeps an idle SSE
  session alive: :mod:`._server`;
* speaks MCP with raw JSON results, so that the Computer (not ``mcp``'s typed models) decides
  how lenient to be — e.g. an out-of-range ``annotations.priority`` must not fail a whole
  ``resources/list``; sends ``notifications/cancelled`` when a call is abandoned (timeout or
  cancel): :mod:`._server` too;
* turns an HTTP 401/403/5xx answer to a JSON-RPC POST into a JSON-RPC error carrying the
  status, so one refused call does not tear the session down and the caller can map it
  (:mod:`._transports`, :mod:`._failures`);
* hands an OAuth server's transport the ``httpx2`` auth of :mod:`a2c_computer._oauth`; a
  server that needs a sign-in is ``needs_auth``, not ``failed``, also when its token is
  refused mid-session (its tools are withdrawn until it is back);
* forwards an MCP server's log notifications to the Computer's log at their level.

Other modules import from this package, not from its modules. A private name of ``mcp`` is
reached through :mod:`a2c_computer._upstream` only.
"""

from ._era import MODERN, era_of
from ._failures import McpCallFailure
from ._failures import describe_error as describe_error  # the tests check its redaction
from ._inputs import INPUT_REQUIRED, InputCallbacks
from ._server import McpServer
from ._status import NotificationKind, ServerStatus

__all__ = [
    "INPUT_REQUIRED",
    "MODERN",
    "InputCallbacks",
    "McpCallFailure",
    "McpServer",
    "NotificationKind",
    "ServerStatus",
    "era_of",
]
