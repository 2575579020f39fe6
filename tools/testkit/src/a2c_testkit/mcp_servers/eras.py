"""Test MCP server written as an author on mcp 2 writes one (``MCPServer``), for the eras.

Run: ``python -m a2c_testkit.mcp_servers.eras [--modern-only] [--http PORT]`` (stdio by
default; with ``--http``, Streamable HTTP at ``/mcp``, printing ``PORT <n>`` once it
listens). It serves both MCP eras, as every mcp 2 server does (the client's first request
chooses); ``--modern-only`` refuses ``initialize`` with -32022 naming 2026-07-28, as a
server that speaks only the modern era answers (the spec leaves the code to it): on HTTP in
a middleware (each request stands alone there), on stdio before the server sees it (mcp 2's
stdio loop settles the era on the first request, so a refused ``initialize`` that reached
it would lock the pipe to the handshake era, which no modern-only server does).

Tools:

* ``echo {text}``: ``"<protocol version>:<text>"``, so a test sees the era of the call;
* ``ask_push {question}``: asks the user with ``ctx.elicit`` (a server-initiated request:
  "no back-channel" on a 2026-07-28 connection), answers ``"push:<answer>"`` or
  ``"push:declined"``;
* ``ask_resolved {question}``: asks through the era-agnostic resolver
  (``Annotated[Answer, Resolve(fn)]`` returning ``Elicit``): an ``input_required`` result
  in 2026-07-28, a pushed ``elicitation/create`` in the handshake era;
  ``"resolved:<answer>"``;
* ``sample_push {prompt}``: asks the model with ``ctx.session.create_message``;
* ``grow``: adds the tool ``grown`` and announces it (``tools/list_changed`` on the
  session in the handshake era, on ``subscriptions/listen`` streams in 2026-07-28).
"""

from __future__ import annotations

import argparse
import warnings
from typing import Annotated, Any

import anyio
from mcp import MCPDeprecationWarning, MCPError, types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from ._kit import serve_http_forever

__all__ = ["build_server", "main"]

# Sampling is deprecated in 2026-07-28 (SEP-2577); the test server uses it on purpose.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)


class Answer(BaseModel):
    answer: str


async def _ask(question: str) -> Elicit[Answer]:
    return Elicit(question, Answer)


_ONLY_MODERN = "this server speaks MCP 2026-07-28 only"


def _refusal_data(params: Any) -> dict[str, Any]:
    requested = params.get("protocolVersion") if isinstance(params, dict) else None
    return {"supported": list(MODERN_PROTOCOL_VERSIONS), "requested": requested}


async def _refuse_initialize(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    if ctx.method == "initialize":
        raise MCPError(
            code=types.UNSUPPORTED_PROTOCOL_VERSION,
            message=_ONLY_MODERN,
            data=_refusal_data(dict(ctx.params or {})),
        )
    return await call_next(ctx)


async def _serve_modern_only_stdio(server: MCPServer) -> None:
    """stdio where ``initialize`` is answered with -32022 before the server sees it."""
    async with stdio_server() as (read, write):
        inner_send, inner_read = anyio.create_memory_object_stream[SessionMessage | Exception](16)

        async def screen() -> None:
            async with inner_send:
                async for item in read:
                    message = item.message if isinstance(item, SessionMessage) else None
                    if isinstance(message, types.JSONRPCRequest) and message.method == "initialize":
                        error = types.ErrorData(
                            code=types.UNSUPPORTED_PROTOCOL_VERSION,
                            message=_ONLY_MODERN,
                            data=_refusal_data(message.params),
                        )
                        reply = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
                        await write.send(SessionMessage(reply))
                        continue
                    await inner_send.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(screen)
            lowlevel = server._lowlevel_server
            await lowlevel.run(inner_read, write, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()


def build_server(*, modern_only: bool = False) -> MCPServer:
    server = MCPServer(
        "a2c-test-eras",
        version="2.0.0",
        middleware=[_refuse_initialize] if modern_only else None,
    )

    @server.tool()
    async def echo(text: str, ctx: Context) -> str:
        """Echo the text back after the protocol version of the call."""
        return f"{ctx.protocol_version}:{text}"

    @server.tool()
    async def ask_push(question: str, ctx: Context) -> str:
        """Ask the user with a server-initiated elicitation (ctx.elicit)."""
        result = await ctx.elicit(question, Answer)
        if result.action == "accept" and result.data is not None:
            return f"push:{result.data.answer}"
        return f"push:{result.action}"

    @server.tool()
    async def ask_resolved(question: str, reply: Annotated[Answer, Resolve(_ask)]) -> str:
        """Ask the user through the era-agnostic resolver."""
        return f"resolved:{reply.answer}"

    @server.tool()
    async def sample_push(prompt: str, ctx: Context) -> str:
        """Ask the model with a server-initiated sampling request."""
        message = types.SamplingMessage(
            role="user", content=types.TextContent(type="text", text=prompt)
        )
        result = await ctx.session.create_message([message], max_tokens=50)
        content = result.content
        return f"sampled:{content.text if isinstance(content, types.TextContent) else '?'}"

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool ``grown`` and announce the new tool list."""

        @server.tool()
        def grown() -> str:
            """A tool added at run time."""
            return "grown"

        if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            await ctx.session.send_tool_list_changed()
        else:
            await ctx.notify_tools_changed()
        return "grew"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modern-only", action="store_true")
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    args = parser.parse_args()
    server = build_server(modern_only=args.modern_only)
    if args.http is None and args.modern_only:
        anyio.run(_serve_modern_only_stdio, server)
        return
    if args.http is None:
        server.run("stdio")
        return
    serve_http_forever(server.streamable_http_app(), args.http, announce=True)


if __name__ == "__main__":
    main()
