"""The console's HTTP routes under ``/console``: pages, the event stream, login, assets.

Every answer carries a strict Content-Security-Policy (the page's one script and one
stylesheet come from ``/console/static/``; no inline script or style anywhere).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import math
import urllib.parse
from importlib import resources
from typing import Any, Final

from a2c_server._edge._gate import Receive, Scope, Send, first_query_value
from a2c_server._edge._shutdown import Drain
from a2c_server._observe._audit import Audit, AuditEvent
from a2c_server._observe._logs import log

from ._access import Access
from ._feed import ConsoleFeed
from ._throttle import LoginThrottle

_log = logging.getLogger("a2c_server.console")

__all__ = ["PREFIX", "Console"]

PREFIX: Final = "/console"
CSP: Final = (
    b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    b"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_STATIC: Final = {
    "console.js": b"text/javascript; charset=utf-8",
    "console.css": b"text/css; charset=utf-8",
    "favicon.svg": b"image/svg+xml",
}
_MAX_FORM: Final = 4096
#: A comment line keeps proxies from closing an idle stream.
_KEEPALIVE: Final = 15.0


def _asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


class Console:
    """ASGI handler for every path under ``/console``."""

    def __init__(
        self,
        *,
        feed: ConsoleFeed,
        access: Access,
        node_id: str,
        drain: Drain | None = None,
        throttle: LoginThrottle | None = None,
        audit: Audit | None = None,
    ) -> None:
        self.feed = feed
        self._audit = audit
        self._drain = drain
        self._access = access
        self._throttle = throttle or LoginThrottle()
        self._node_id = node_id
        self._assets = {name: _asset(name) for name in _STATIC}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")[len(PREFIX) :] or "/"
        method = scope.get("method")
        if path.startswith("/static/"):
            name = path[len("/static/") :]
            if name not in _STATIC:
                return await _page(send, 404, "Not found", "<p>No such file.</p>")
            return await _respond(send, 200, _STATIC[name], self._assets[name], cache=True)
        if path == "/login":
            if method != "POST":
                return await _page(send, 405, "Method not allowed", "<p>POST only.</p>")
            return await self._login(scope, receive, send)
        if path == "/logout":
            if method != "POST":
                return await _page(send, 405, "Method not allowed", "<p>POST only.</p>")
            return await _redirect(send, self._access.clear_cookie())
        if method not in ("GET", "HEAD"):
            return await _page(send, 405, "Method not allowed", "<p>GET only.</p>")
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        # No ``?token=`` login: a token in a URL ends up in access logs and histories.
        if not await self._admitted(scope, send):
            return None
        if path == "/events":
            office = first_query_value(query, "office") or None
            history = first_query_value(query, "history") != "0"
            calls = first_query_value(query, "calls") == "1"
            return await self._events(receive, send, office, history=history, calls=calls)
        if path == "/":
            return await _page(send, 200, "a2c console", await self._body(None))
        if path.startswith("/office/"):
            # The raw path, decoded once: an office id may contain "/" or "%".
            raw = bytes(scope.get("raw_path") or path.encode()).decode("latin-1")
            office = urllib.parse.unquote(raw.partition("/office/")[2])
            if office:
                return await _page(send, 200, f"office {office}", await self._body(office))
        return await _page(send, 404, "Not found", "<p>No such page.</p>")

    async def _admitted(self, scope: Scope, send: Send) -> bool:
        """Whether the request may see the console; if not, the refusal is sent."""
        headers = scope.get("headers", ())
        if self._access.cookie_ok(headers):
            return True
        bearer = self._access.bearer(headers)
        if bearer is not None:
            if await self._throttled(scope, send):
                return False
            if self._access.token_ok(bearer):
                return True  # not audited: a bearer is presented on every request
            self._failed(scope, "bearer")
        path = scope.get("path", "")[len(PREFIX) :] or "/"
        if path == "/events" or bearer is not None:
            await _respond(send, 401, b"text/plain; charset=utf-8", b"401 Unauthorized\n")
        else:
            await _login_page(send, None)
        return False

    async def _throttled(self, scope: Scope, send: Send) -> bool:
        wait = self._throttle.retry_after(_address(scope))
        if wait is None:
            return False
        await _respond(
            send, 429, b"text/plain; charset=utf-8", b"429 Too many failed logins\n",
            extra=[(b"retry-after", str(max(1, math.ceil(wait))).encode())],
        )  # fmt: skip
        return True

    def _failed(self, scope: Scope, how: str) -> None:
        address = _address(scope)
        self._throttle.failed(address)
        log(_log, logging.WARNING, "console login failed", peer=address, via=how)
        if self._audit is not None:
            self._audit.record(AuditEvent.CONSOLE_LOGIN, "refused", peer=address, reason=how)

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await self._throttled(scope, send):
            return
        body = b""
        while True:
            message = await receive()
            if message.get("type") != "http.request":
                return
            body += message.get("body", b"")
            if len(body) > _MAX_FORM:
                await _page(send, 413, "Too large", "<p>Form too large.</p>")
                return
            if not message.get("more_body"):
                break
        form = urllib.parse.parse_qs(body.decode("latin-1"))
        token = (form.get("token") or [None])[0]
        if not self._access.token_ok(token):
            self._failed(scope, "form")
            await _login_page(send, "That token was not accepted.")
            return
        if self._audit is not None:
            self._audit.record(AuditEvent.CONSOLE_LOGIN, "ok", peer=_address(scope), reason="form")
        await _redirect(send, self._access.set_cookie(_secure(scope)))

    async def _events(
        self, receive: Receive, send: Send, office: str | None, *, history: bool, calls: bool
    ) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),  # nginx: do not buffer the stream
            (b"content-security-policy", CSP),
        ]})  # fmt: skip
        gone = asyncio.ensure_future(_disconnected(receive))
        # A shutdown's drain ends the streams with the routed calls, not uvicorn's timeout.
        ends: set[asyncio.Future[Any]] = {gone}
        if self._drain is not None:
            ends.add(self._drain.expired())
        try:
            async with self.feed.viewing(office, history=history, calls=calls) as viewer:
                await send({"type": "http.response.body", "body": b"retry: 3000\n\n",
                            "more_body": True})  # fmt: skip
                while not viewer.closed and not any(end.done() for end in ends):
                    wake = asyncio.ensure_future(viewer.wake.wait())
                    await asyncio.wait({wake, *ends}, timeout=_KEEPALIVE,
                                       return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
                    wake.cancel()
                    if any(end.done() for end in ends):
                        break
                    chunk = b"".join(viewer.take()) or b": keepalive\n\n"
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            gone.cancel()
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _body(self, office: str | None) -> str:
        node = html.escape(self._node_id)
        node_rows, session_rows = await self._rows(office)
        crumbs = ""
        if office is not None:
            crumbs = (
                f'<p class="crumbs"><a href="{PREFIX}">All offices</a> › {html.escape(office)}</p>'
            )
        scope = "This office" if office is not None else "Offices and sessions"
        # Agents, Computers and In flight count the office; the Server's counters carry no
        # office label (one per office would grow without bound), so those tiles say so.
        wide = " <small>(this node, all offices)</small>" if office is not None else ""
        events = "Event stream" if office is not None else "Office events"
        return _TEMPLATE.format(
            node=node, crumbs=crumbs, scope=scope, events=events, wide=wide,
            office_attr=html.escape(office, quote=True) if office is not None else "",
            filter_hidden=" hidden" if office is not None else "",
            node_rows=node_rows, session_rows=session_rows,
        )  # fmt: skip

    async def _rows(self, office: str | None) -> tuple[str, str]:
        """The nodes and sessions as the page first shows them (the stream then takes over)."""
        try:
            snapshot = await self.feed.registry.read()
        except Exception:
            return "", ""
        nodes = "".join(
            _tr(
                [
                    n["id"] + (" (this node)" if n["self"] else ""),
                    {True: "yes", False: "NO (awaiting reap)"}.get(n["alive"], "unreachable"),
                    "—" if n["heartbeat_age"] is None else f"{n['heartbeat_age']:.1f} s",
                    str(n["sessions"]),
                ]
            )
            for n in snapshot.nodes
        )
        members = sorted(
            (m for m in snapshot.members if office is None or m["office"] == office),
            key=lambda m: (m["office"] or "", m["role"], m["name"] or ""),
        )
        sessions = "".join(
            _tr(
                [
                    m["office"] or "(lobby)",
                    m["role"],
                    m["version"] or "—",
                    m["name"] or "—",
                    m["subject"] or "—",
                    m["node"],
                    "—" if m["since"] is None else f"{m['since']:.0f} s ago",
                    m["transport"] or "—",
                ]
            )
            for m in members
        )
        return nodes, sessions


_TEMPLATE: Final = """<header>
<h1><a href="/console">a2c console</a></h1>
<span class="node">node <b id="node">{node}</b></span>
<span id="status" class="status">connecting…</span>
<form method="post" action="/console/logout"><button type="submit">Log out</button></form>
</header>
<main id="console" data-office="{office_attr}">
{crumbs}
<section class="tiles" aria-label="Totals">
<div class="tile"><span class="n" id="c-agents">–</span><span>Agents</span></div>
<div class="tile"><span class="n" id="c-computers">–</span><span>Computers</span></div>
<div class="tile"><span class="n" id="c-inflight">–</span><span>In flight</span></div>
<div class="tile"><span class="n" id="c-calls">–</span><span>Calls routed{wide}</span></div>
<div class="tile warn"><span class="n" id="c-refusals">–</span><span>Refusals{wide}</span></div>
<div class="tile bad"><span class="n" id="c-errors">–</span><span>Errors{wide}</span></div>
</section>
<section><h2>Activity <small>per second, since this page opened{wide}</small></h2>
<div id="charts" class="charts"></div></section>
<section><h2>Nodes</h2><div class="scroll"><table id="nodes">
<thead><tr><th>Node</th><th>Alive</th><th>Heartbeat age</th><th>Sessions</th></tr></thead>
<tbody>{node_rows}</tbody></table></div></section>
<section><h2>{scope}</h2>
<input id="filter" type="search" placeholder="Filter by office"
 aria-label="Filter by office"{filter_hidden}>
<div class="scroll"><table id="sessions">
<thead><tr><th>Office</th><th>Role</th><th>Protocol</th><th>Name</th><th>Subject</th><th>Node</th>
<th>Connected</th><th>Transport</th></tr></thead>
<tbody>{session_rows}</tbody></table></div></section>
<section><h2>Calls in flight</h2><div class="scroll"><table id="inflight">
<thead><tr><th>Office</th><th>Event</th><th>Tool</th><th>Computer</th><th>Agent</th><th>Age</th></tr></thead>
<tbody></tbody></table></div>
<p class="note">Calls relayed by this node (a call shows on the node its Agent is
connected to).</p></section>
<section><h2>Recent calls</h2><div class="scroll"><table id="finished">
<thead><tr><th>Office</th><th>Event</th><th>Tool</th><th>Computer</th><th>Outcome</th>
<th>Code</th><th>Duration</th></tr></thead>
<tbody></tbody></table></div></section>
<section><h2>{events}</h2><ol id="events" class="events"></ol></section>
<noscript><p>The live view needs JavaScript.</p></noscript>
</main>"""


def _tr(cells: list[str]) -> str:
    return "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"


def _address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _secure(scope: Scope) -> bool:
    if scope.get("scheme") == "https":
        return True
    for key, value in scope.get("headers", ()):
        if key.lower() == b"x-forwarded-proto" and value.strip().lower() == b"https":
            return True
    return False


async def _disconnected(receive: Receive) -> None:
    while (await receive()).get("type") != "http.disconnect":
        pass


async def _login_page(send: Send, problem: str | None) -> None:
    note = f'<p class="problem">{html.escape(problem)}</p>' if problem else ""
    body = f"""<main class="login"><h1>a2c console</h1>{note}
<form method="post" action="/console/login">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Open the console</button></form></main>"""
    await _page(send, 401, "a2c console: log in", body)


async def _page(send: Send, status: int, title: str, body: str) -> None:
    document = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="stylesheet" href="/console/static/console.css">
<link rel="icon" href="/console/static/favicon.svg" type="image/svg+xml">
<script src="/console/static/console.js" defer></script>
</head><body>
{body}
</body></html>
"""
    await _respond(send, status, b"text/html; charset=utf-8", document.encode())


async def _redirect(send: Send, cookie: bytes) -> None:
    await send({"type": "http.response.start", "status": 303, "headers": [
        (b"location", PREFIX.encode()), (b"set-cookie", cookie),
        (b"content-length", b"0"), (b"cache-control", b"no-store"),
        (b"content-security-policy", CSP), (b"referrer-policy", b"no-referrer"),
    ]})  # fmt: skip
    await send({"type": "http.response.body", "body": b""})


async def _respond(
    send: Send,
    status: int,
    content_type: bytes,
    body: bytes,
    *,
    cache: bool = False,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", content_type),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"max-age=300" if cache else b"no-store"),
        (b"content-security-policy", CSP),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"x-frame-options", b"DENY"),
        *(extra or ()),
    ]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})
