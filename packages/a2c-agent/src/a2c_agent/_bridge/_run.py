"""``a2c-agent mcp``: start the office link and the MCP transport, stop both together."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from typing import TYPE_CHECKING

from a2c_agent._upstream import quiet_host_departures
from a2c_protocol import token_file_auth

from ._args import usage_problem

if TYPE_CHECKING:
    from a2c_agent._agent import AsyncAgent
    from a2c_agent._session._connection import AuthSource

    from ._server import Bridge

__all__ = ["EXTRA_MISSING", "main"]

#: Printed when the optional ``mcp`` dependency is not installed.
EXTRA_MISSING = (
    "`a2c-agent mcp` needs the optional MCP dependency, which is not installed: "
    "pip install 'a2c-agent[mcp]'"
)

_EXIT_OK, _EXIT_ERROR, _EXIT_USAGE, _EXIT_INTERRUPTED = 0, 1, 2, 130


def _auth(args: argparse.Namespace) -> AuthSource:
    if args.token_file:
        return token_file_auth(args.token_file)
    return {"token": args.token} if args.token else None


def _logging() -> None:
    """Logs on stderr: on stdio, stdout is the MCP channel."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("a2c-agent: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    # The MCP library logs every request at INFO; the bridge logs nothing per call.
    logging.getLogger("mcp").setLevel(logging.WARNING)
    quiet_host_departures()
    for noisy in ("socketio", "engineio", "httpx", "uvicorn"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


async def _serve(args: argparse.Namespace) -> None:
    from a2c_agent._agent import AsyncAgent

    from ._office import Office
    from ._server import Bridge, BridgeOptions

    bridge = Bridge(
        BridgeOptions(
            computers=tuple(args.computers),
            separator=args.separator,
            tool_timeout=args.tool_timeout,
            input_timeout=args.input_timeout,
        )
    )

    def make_agent() -> AsyncAgent:
        return AsyncAgent(
            args.server,
            name=args.name,
            auth=_auth(args),
            socketio_path=args.socketio_path,
            request_timeout=args.request_timeout,
            reconnect=True,
            max_drained_bytes=args.max_inline_bytes,
        )

    office = Office(
        make_agent,
        args.office,
        args.server,
        on_tools=bridge.tools_changed,
        on_resources=bridge.resources_changed,
        on_left=bridge.computer_left,
    )
    bridge.office = office
    link = asyncio.ensure_future(office.run())
    serving = asyncio.ensure_future(_transport(args, bridge))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # a host, systemd or docker stopping us
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if stop.is_set() and not serving.done():
            logging.getLogger("a2c_agent.bridge").info("signal received; leaving the office")
            serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
    finally:
        stopping.cancel()
        serving.cancel()
        link.cancel()
        bridge.close()
        # What the transport raised went up from ``await serving`` already.
        await asyncio.gather(serving, link, return_exceptions=True)
        await office.close()


async def _transport(args: argparse.Namespace, bridge: Bridge) -> None:
    if args.http is not None:
        from ._http import serve_http

        host, port = args.http
        await serve_http(bridge, host, port, args.http_token, args.http_origins,
                         generate=not args.http_no_token)  # fmt: skip
    else:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await bridge.server.run(read, write, bridge.init_options())


def main(args: argparse.Namespace) -> int:
    """Run the bridge until its MCP client goes away (stdio) or Ctrl-C / SIGTERM (both):
    it then leaves the office and exits 0."""
    problem = usage_problem(args)
    if problem is not None:
        print(f"a2c-agent mcp: error: {problem}", file=sys.stderr)
        return _EXIT_USAGE
    try:
        import mcp  # noqa: F401  (the optional extra; only this command needs it)
    except ImportError:
        print(f"a2c-agent: error: {EXTRA_MISSING}", file=sys.stderr)
        return _EXIT_ERROR
    _logging()
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        return _EXIT_INTERRUPTED
    except OSError as exc:  # --http could not listen
        print(f"a2c-agent mcp: error: {exc}", file=sys.stderr)
        return _EXIT_ERROR
    return _EXIT_OK
