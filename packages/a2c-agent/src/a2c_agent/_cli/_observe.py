"""``a2c-agent watch --console``: follow an office without taking its Agent seat.

The protocol allows one Agent per office, and ``watch``, every other command and the
``mcp`` bridge all take that seat: a desktop host running the bridge all day would lock out
anyone who only wants to see what happens. The Server's console (``a2c-server
--console``) already follows every office read-only for the operator; this reads its event
stream (``GET /console/events``, Server-Sent Events) instead of joining the office. It is
no protocol session at all, so the office and its Agent never see it.

Rules:

* the stream is asked with ``history=0`` (only what happens from now on) and ``calls=1``
  (one ``call`` event per finished call), for ``--office`` only;
* the admin token (``A2C_ADMIN_TOKEN``, or ``--admin-token-file``) goes in an
  ``Authorization: Bearer`` header, never in a URL; without one, only a console that needs
  none (a loopback Server without ``--admin-token``) answers;
* each office event prints as ``watch`` prints a notification (``{"time", "event",
  "data"}`` with ``--json``, one readable line in a table), each finished call as event
  ``call`` with the tool, Computer, Agent, outcome, code and duration (never arguments or
  results: the console keeps none);
* a refusal ends it with exit 1 and what to do (401 a wrong or missing admin token, 404 no
  console on that Server, 429 too many wrong tokens); a lost stream is reconnected with
  backoff and said on stderr (what happened meanwhile is not shown);
* behind a load balancer of several nodes sharing Redis, the node it reaches shows the
  whole cluster's calls and office events when every node runs ``--console``; a 404 may
  also be a balancer that does not pass ``/console`` on, and the message says so.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, Final, TextIO

import httpx

from a2c_protocol import reconnect_delays

from ._args import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK

__all__ = [
    "ADMIN_TOKEN_ENV",
    "SseReader",
    "admin_token",
    "console_events_url",
    "event_of",
    "line_of",
    "main",
    "members_line",
    "refusal_message",
    "watch_console",
]

#: Where the admin token of the Server's console comes from (or ``--admin-token-file``).
ADMIN_TOKEN_ENV: Final = "A2C_ADMIN_TOKEN"
#: The notice keys the console repeats for an office event (names only).
_NOTICE_KEYS: Final = ("office_id", "computer", "agent", "req_id")
#: The console sends a comment every 15 s: a stream silent for this long is dead.
_READ_TIMEOUT: Final = 60.0


class ConsoleError(Exception):
    """The console said no, or was never reached: the watch ends (exit 1)."""


class SseReader:
    """Server-Sent Events, one line at a time: ``feed(line)`` returns a finished
    ``(event, data)`` at each blank line, else None (comments and ``retry:`` are skipped)."""

    def __init__(self) -> None:
        self._event = "message"
        self._data: list[str] = []

    def feed(self, line: str) -> tuple[str, str] | None:
        if not line:
            if not self._data:
                self._event = "message"
                return None
            done = (self._event, "\n".join(self._data))
            self._event, self._data = "message", []
            return done
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None


def event_of(kind: str, record: Mapping[str, Any]) -> tuple[dt.datetime, str, dict[str, Any]]:
    """What one console event prints as: (time, event name, data)."""
    if kind == "call":
        when = record.get("ended") or record.get("started")
        data = {
            "computer": record.get("computer"), "agent": record.get("agent"),
            "request": record.get("event"), "tool": record.get("tool"),
            "outcome": record.get("outcome"), "code": record.get("code"),
            "duration": record.get("duration"),
        }  # fmt: skip
        event = "call"
    else:
        when = record.get("at")
        data = {k: record[k] for k in _NOTICE_KEYS if isinstance(record.get(k), str)}
        event = str(record.get("event") or "office")
    stamp = dt.datetime.fromtimestamp(when, dt.UTC) if isinstance(when, int | float) else None
    return stamp or dt.datetime.now(dt.UTC), event, data


def line_of(when: dt.datetime, event: str, data: Mapping[str, Any], *, as_table: bool) -> str:
    """The line ``watch`` prints for one event (the same shapes as its notifications)."""
    if not as_table:
        payload = {"time": when.isoformat(timespec="milliseconds"), "event": event, "data": data}
        return json.dumps(payload, ensure_ascii=False)
    fields = " ".join(
        f"{key}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
        for key, value in data.items()
        if value is not None
    )
    return f"{when.astimezone().strftime('%H:%M:%S')}  {event}  {fields}".rstrip()


def console_events_url(server: str) -> str:
    """The console's event stream on ``server`` (its base URL, as given to ``--server``)."""
    return server.rstrip("/") + "/console/events"


def admin_token(token_file: str | None, environ: Mapping[str, str]) -> str | None:
    """The admin token from ``--admin-token-file`` (read now) or ``A2C_ADMIN_TOKEN``."""
    if token_file is not None:
        return Path(token_file).read_text(encoding="utf-8").strip() or None
    return environ.get(ADMIN_TOKEN_ENV) or None


def refusal_message(status: int, url: str, *, had_token: bool, retry_after: str | None) -> str:
    """Why the console said no, and what to do about it."""
    if status == 401:
        if had_token:
            return f"the console at {url} refused the admin token ({ADMIN_TOKEN_ENV})"
        return (
            f"the console at {url} needs the Server's admin token: set {ADMIN_TOKEN_ENV} "
            "or pass --admin-token-file"
        )
    if status == 404:
        return (
            f"{url}: this Server serves no console; start it with --console (behind a "
            "load balancer or reverse proxy, check that it passes /console/ on to the nodes)"
        )
    if status == 429:
        wait = retry_after or "a few"
        return f"the console at {url} refuses logins for {wait} s after too many wrong tokens"
    if status == 421:
        return f"{url} answered 421: use the Server's loopback address, or its --allowed-hosts"
    return f"the console at {url} answered HTTP {status}"


def members_line(state: Mapping[str, Any], office: str) -> str:
    """The stderr line naming who is in the office, from a console state document."""
    members = [m for m in state.get("members") or () if isinstance(m, dict)]
    listed = ", ".join(
        f"{m.get('name')} ({m.get('role')})" for m in members if m.get("office") == office
    )
    return f"a2c-agent: office {office!r} now: {listed or 'nobody'}"


async def watch_console(
    *,
    server: str,
    office: str,
    token: str | None,
    out: TextIO,
    as_table: bool,
    count: int | None,
    duration: float | None,
) -> int:
    """Print the office's events until Ctrl-C, ``count`` of them, ``duration`` s, or a refusal."""
    url = console_events_url(server)
    print(f"a2c-agent: watching office {office!r} through the console of {server} (read-only, "
          "no Agent seat taken; Ctrl-C to stop)", file=sys.stderr, flush=True)  # fmt: skip
    seen = 0
    try:
        async with asyncio.timeout(duration):
            async for when, event, data in _follow(url, office, token):
                print(line_of(when, event, data, as_table=as_table), file=out, flush=True)
                seen += 1
                if count is not None and seen >= count:
                    return EXIT_OK
    except TimeoutError:
        return EXIT_OK
    except ConsoleError as exc:
        print(f"a2c-agent: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK  # pragma: no cover - _follow ends only by raising


async def _follow(
    url: str, office: str, token: str | None
) -> AsyncIterator[tuple[dt.datetime, str, dict[str, Any]]]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    params = {"office": office, "history": "0", "calls": "1"}
    timeout = httpx.Timeout(10.0, read=_READ_TIMEOUT)
    delays = reconnect_delays(initial=0.5, maximum=10.0)
    reached = lost = False
    async with httpx.AsyncClient(timeout=timeout) as client:
        while True:
            try:
                async with client.stream("GET", url, params=params, headers=headers) as answer:
                    if answer.status_code != 200:
                        raise ConsoleError(refusal_message(
                            answer.status_code, url, had_token=token is not None,
                            retry_after=answer.headers.get("retry-after"),
                        ))  # fmt: skip
                    if lost:
                        print("a2c-agent: reconnected (events while disconnected are not "
                              "shown)", file=sys.stderr, flush=True)  # fmt: skip
                    reached, lost, told = True, False, False
                    delays = reconnect_delays(initial=0.5, maximum=10.0)
                    reader = SseReader()
                    async for line in answer.aiter_lines():
                        done = reader.feed(line.rstrip("\r"))
                        if done is None:
                            continue
                        kind, text = done
                        if kind in ("office", "call"):
                            yield event_of(kind, json.loads(text))
                        elif kind == "state" and not told:  # who is there, once a stream
                            print(members_line(json.loads(text), office), file=sys.stderr,
                                  flush=True)  # fmt: skip
                            told = True
            except httpx.HTTPError as exc:
                reason = str(exc).replace(" ssl:default", "") or type(exc).__name__
                if not reached:  # never reached: a wrong URL is not worth waiting out
                    raise ConsoleError(f"cannot reach the console at {url}: {reason}") from exc
                if not lost:
                    print(f"a2c-agent: connection to the console lost ({reason}); "
                          "reconnecting", file=sys.stderr, flush=True)  # fmt: skip
                lost = True
            else:
                if not lost:
                    print("a2c-agent: the console closed the stream; reconnecting",
                          file=sys.stderr, flush=True)  # fmt: skip
                lost = True
            await asyncio.sleep(next(delays))


def main(args: Any, out: TextIO, as_table: bool, environ: Mapping[str, str]) -> int:
    """``a2c-agent watch --console``: no Agent, no seat; the exit code of the watch."""
    try:
        token = admin_token(args.admin_token_file, environ)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"a2c-agent: error: --admin-token-file: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        return asyncio.run(
            watch_console(
                server=args.server, office=args.office, token=token, out=out,
                as_table=as_table, count=args.count, duration=args.duration,
            )
        )  # fmt: skip
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
