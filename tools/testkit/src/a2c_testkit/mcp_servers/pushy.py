"""Test MCP server that asks too much, or asks badly: the Computer must bound it.

Run: ``python -m a2c_testkit.mcp_servers.pushy [--http PORT]`` (stdio by default; with
``--http``, Streamable HTTP at ``/mcp``, printing ``PORT <n>`` once it listens). Written on
mcp 2 (``MCPServer``), as a hostile or careless author would write it. Each tool that asks
writes what it got back, one line per request, to the file ``report`` names (when given),
so a test sees what reached the MCP server.

Server-initiated requests (the handshake era):

* ``flood {count, rounds, report}``: ``rounds`` times, ``count`` forms asked at once
  (``ctx.elicit`` from concurrent tasks, each shielded from the call's cancellation so
  that every answer it was sent is reported) -> ``flood:<answers>``;
* ``link {url, report}``: ``ctx.elicit_url`` with that URL -> ``link:<action>``;
* ``blunt``: ``ctx.elicit`` a form without catching its failure (an ``MCPError`` from the
  client passes through ``MCPServer`` as the call's JSON-RPC error, as most authors' tools
  let it).

Raw 2026-07-28 answers (``input_required`` from a middleware, any era):

* ``modern_flood {count}``: an ``input_required`` result carrying ``count`` forms, then
  ``modern_flood:<answered>`` once the retry brings ``inputResponses``;
* ``modern_link {url}``: an ``input_required`` result with one URL-mode request;
* ``modern_twice``: a form, then (``requestState`` ``second``) another form, then
  ``modern_twice:<first action>,<second action>``.

And ``pause {seconds}`` -> ``paused`` (asks nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

from ._kit import run_from_argv

__all__ = ["build_server", "main"]


class Name(BaseModel):
    name: str


def _report(path: str | None, line: str) -> None:
    if path:
        with Path(path).open("a", encoding="utf-8") as out:
            out.write(line.replace("\n", " ") + "\n")


def _form(i: int) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": f"Question {i}?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }


def _text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


_RAW = ("modern_flood", "modern_link", "modern_twice")


async def _modern_raw(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    params = dict(ctx.params or {})
    if ctx.method != "tools/call" or params.get("name") not in _RAW:
        return await call_next(ctx)
    args = params.get("arguments") or {}
    responses = params.get("inputResponses")
    if params["name"] == "modern_twice":
        if responses is None:
            return {"resultType": "input_required", "inputRequests": {"first": _form(1)},
                    "requestState": "first"}  # fmt: skip
        answered: dict[str, Any] = next(iter(responses.values()), {})
        action = answered.get("action")
        if params.get("requestState") == "first":
            return {"resultType": "input_required", "inputRequests": {"second": _form(2)},
                    "requestState": f"second:{action}"}  # fmt: skip
        return _text(f"modern_twice:{str(params.get('requestState'))[7:]},{action}")
    if params["name"] == "modern_flood":
        if responses is not None:
            return _text(f"modern_flood:{len(responses)}")
        requests = {f"q{i}": _form(i) for i in range(int(args.get("count", 1)))}
    else:
        if responses is not None:
            return _text(f"modern_link:{responses.get('link', {}).get('action')}")
        url = {"mode": "url", "message": "Open this", "url": args.get("url"),
               "elicitationId": "link-1"}  # fmt: skip
        requests = {"link": {"method": "elicitation/create", "params": url}}
    return {"resultType": "input_required", "inputRequests": requests}


def build_server() -> MCPServer:
    server = MCPServer("a2c-test-pushy", version="1.0.0", middleware=[_modern_raw])

    @server.tool()
    async def pause(seconds: float) -> str:
        """Sleep, then answer (a call that keeps the server busy)."""
        await anyio.sleep(seconds)
        return "paused"

    @server.tool()
    async def flood(ctx: Context, count: int, rounds: int = 1, report: str = "") -> str:
        """Ask ``count`` forms at once, ``rounds`` times."""
        said: list[str] = []

        async def one(i: int) -> None:
            # Shielded: a cancelled call still hears, and reports, every answer it was sent.
            with anyio.CancelScope(shield=True):
                try:
                    result = await ctx.elicit(f"Question {i}?", Name)
                except Exception as exc:
                    _report(report, f"refused: {exc}")
                    said.append("refused")
                    return
            _report(report, f"answered: {result.action}")
            said.append(result.action)

        for r in range(rounds):
            async with anyio.create_task_group() as group:
                for i in range(count):
                    group.start_soon(one, r * count + i)
        return "flood:" + ",".join(sorted(said))

    @server.tool()
    async def link(ctx: Context, url: str, report: str = "") -> str:
        """Send the user to ``url``."""
        try:
            result = await ctx.elicit_url("Open this", url, "link-1")
        except Exception as exc:
            _report(report, f"refused: {exc}")
            return f"link failed: {exc}"
        _report(report, f"answered: {result.action}")
        return f"link:{result.action}"

    @server.tool()
    async def blunt(ctx: Context) -> str:
        """Ask a form and let its failure be the call's error."""
        result = await ctx.elicit("Who are you?", Name)
        return f"blunt:{result.action}"

    @server.tool()
    async def modern_flood(count: int) -> str:
        """Answered by the raw middleware."""
        raise RuntimeError("answered by the raw middleware")

    @server.tool()
    async def modern_twice() -> str:
        """Answered by the raw middleware."""
        raise RuntimeError("answered by the raw middleware")

    @server.tool()
    async def modern_link(url: str) -> str:
        """Answered by the raw middleware."""
        raise RuntimeError("answered by the raw middleware")

    return server


def main() -> None:
    run_from_argv(build_server)


if __name__ == "__main__":
    main()
