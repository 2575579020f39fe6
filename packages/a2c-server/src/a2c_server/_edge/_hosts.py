"""DNS-rebinding guard: a tokenless loopback Server answers only loopback ``Host`` names.

A web page the operator visits can rebind its own name to 127.0.0.1 and then read the
console or open a Socket.IO session on a Server that admits anyone on loopback. The
browser still sends the page's name as ``Host``, so such a Server refuses (421) every
HTTP and WebSocket request whose ``Host`` is not ``localhost``, ``127.0.0.1`` or ``[::1]``
(any numeric port), or one of ``--allowed-hosts`` (a reverse proxy's name). A Server with a
token, or bound to a non-loopback address, is left as it is.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable
from typing import Final

from ._gate import Receive, Scope, Send

__all__ = ["HostGuard", "host_name"]

_log = logging.getLogger("a2c_server.hosts")

_PORT: Final = re.compile(r"[0-9]{1,5}")
LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
WARN_EVERY_S: Final = 60.0


def host_name(header: str) -> str:
    """The name part of a ``Host`` header, lower case, without the port.

    Only a port of one to five ASCII digits is taken off; anything else after the name
    (``localhost:evil``, ``localhost:``) leaves the header whole, so it matches no name
    (a prefix match let ``localhost:evil`` through).
    """
    host = header.strip().lower()
    if host.startswith("["):  # [v6]:port
        end = host.find("]")
        if end == -1:
            return host
        name, rest = host[: end + 1], host[end + 1 :]
    elif host.count(":") == 1:
        name, rest = host.split(":")[0], host[host.index(":") :]
    else:
        return host
    if rest and not (rest[0] == ":" and _PORT.fullmatch(rest[1:])):
        return host
    return name


class HostGuard:
    """Which ``Host`` names a tokenless loopback Server answers; one WARNING per interval."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        self._allowed = LOOPBACK_NAMES | {host_name(h) for h in allowed if h.strip()}
        self._last_warning = float("-inf")
        self.refused = 0

    async def screen(self, scope: Scope, receive: Receive, send: Send) -> bool:
        """Answer a refused request (421, or a WebSocket closed before accept: 403); False
        when the request may go on."""
        if scope.get("type") not in ("http", "websocket") or self.allows(scope):
            return False
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008})
            return True
        body = b"Misdirected Request: this Server answers only its loopback names\n"
        await send({"type": "http.response.start", "status": 421,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})
        return True

    def allows(self, scope: Scope) -> bool:
        headers = dict(scope.get("headers") or ())
        raw = headers.get(b"host")
        name = host_name(raw.decode("latin-1")) if raw is not None else ""
        if name in self._allowed:
            return True
        self.refused += 1
        now = time.monotonic()
        if now - self._last_warning >= WARN_EVERY_S:
            self._last_warning = now
            _log.warning(
                "refused a request for Host %r on a tokenless loopback Server (DNS "
                "rebinding?); %d refused so far; use --allowed-hosts for a reverse proxy",
                name[:64], self.refused,
            )  # fmt: skip
        return False
