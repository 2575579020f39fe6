"""``a2c-agent``: poke a deployment from the command line, as an Agent.

::

    a2c-agent --server URL --office ID [--token T] room
    a2c-agent --server URL --office ID tools COMPUTER
    a2c-agent --server URL --office ID config COMPUTER
    a2c-agent --server URL --office ID desktop COMPUTER [--size N] [--window URI]
    a2c-agent --server URL --office ID resources COMPUTER SERVER [--all] [--cursor C]
    a2c-agent --server URL --office ID call COMPUTER TOOL JSON [--timeout S]

Output is JSON, or a readable table when stdout is a terminal (``--json`` / ``--table``
force one). ``--token`` is sent as ``auth.token``. Exit codes: 0 success; 1 an error (its
ErrorPayload message is printed on stderr); 2 bad usage; 3 the tool ran but returned a
result with ``isError`` (the result is printed).

The office may hold only one Agent: this command joins it as ``--name`` (default
``a2c-agent-cli``), so it cannot run while another Agent occupies the office.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from a2c_protocol import A2CError, A2CResource, CallToolResult, RemoteError, from_wire, to_wire

from ._agent import AsyncAgent
from ._types import AgentTool, resource_priority, result_error_code, result_text

__all__ = ["build_parser", "main", "render_table"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_TOOL_ERROR = 3


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``a2c-agent``."""
    parser = argparse.ArgumentParser(
        prog="a2c-agent", description="Talk to an A2C-SMCP 0.2 deployment as an Agent."
    )
    parser.add_argument("--server", required=True, help="Server URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--office", required=True, help="office to join")
    parser.add_argument("--token", help="sent as auth.token")
    parser.add_argument("--name", default="a2c-agent-cli", help="agent name in the office")
    parser.add_argument("--socketio-path", default="socket.io", help="Engine.IO mount path")
    parser.add_argument(
        "--request-timeout", type=float, default=30.0, help="seconds to wait for answers"
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", dest="output", action="store_const", const="json")
    output.add_argument("--table", dest="output", action="store_const", const="table")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("room", help="list the office members")
    for name, text in (("tools", "list a Computer's tools"), ("config", "show its config")):
        commands.add_parser(name, help=text).add_argument("computer")
    desktop = commands.add_parser("desktop", help="render a Computer's desktop")
    desktop.add_argument("computer")
    desktop.add_argument("--size", type=int, help="maximum number of windows")
    desktop.add_argument("--window", help="one window URI (no query or fragment)")
    resources = commands.add_parser("resources", help="list an MCP server's resources")
    resources.add_argument("computer")
    resources.add_argument("mcp_server")
    resources.add_argument("--all", action="store_true", help="follow next_cursor to the end")
    resources.add_argument("--cursor", help="page cursor")
    call = commands.add_parser("call", help="call a tool")
    call.add_argument("computer")
    call.add_argument("tool")
    call.add_argument("params", help="tool arguments as a JSON object")
    call.add_argument("--timeout", type=float, default=60.0, help="tool timeout in seconds")
    return parser


def _tool_json(tool: AgentTool) -> dict[str, Any]:
    return {
        "computer": tool.computer,
        "name": tool.name,
        "description": tool.description,
        "params_schema": tool.params_schema,
        "return_schema": tool.return_schema,
        "meta": tool.meta,
        "tool_meta": to_wire(tool.tool_meta) if tool.tool_meta else None,
    }


async def _run(args: argparse.Namespace) -> tuple[str, Any, int]:
    """Do the command; returns (kind, JSON-ready data, exit code)."""
    params: dict[str, Any] = {}
    if args.command == "call":
        try:
            params = json.loads(args.params)
        except ValueError as exc:
            raise _UsageError(f"JSON must be a JSON object: {exc}") from exc
        if not isinstance(params, dict):
            raise _UsageError("JSON must be a JSON object")
    agent = AsyncAgent(
        args.server,
        name=args.name,
        auth={"token": args.token} if args.token else None,
        socketio_path=args.socketio_path,
        request_timeout=args.request_timeout,
        tool_cache=False,
        reconnect=False,
    )
    async with agent:
        await agent.join_office(args.office)
        command = args.command
        if command == "room":
            return "room", [to_wire(s) for s in await agent.list_room()], EXIT_OK
        if command == "tools":
            return "tools", [_tool_json(t) for t in await agent.get_tools(args.computer)], EXIT_OK
        if command == "config":
            return "config", to_wire(await agent.get_config(args.computer)), EXIT_OK
        if command == "desktop":
            desktops = await agent.get_desktop(args.computer, args.size, args.window)
            return "desktop", desktops, EXIT_OK
        if command == "resources":
            if args.all:
                items = [r async for r in agent.iter_resources(args.computer, args.mcp_server)]
                return "resources", {"resources": to_wire(items)}, EXIT_OK
            page = await agent.get_resources(args.computer, args.mcp_server, args.cursor)
            data = {"resources": to_wire(list(page.resources)), "next_cursor": page.next_cursor}
            return "resources", data, EXIT_OK
        result = await agent.call_tool(args.computer, args.tool, params, timeout=args.timeout)
        return "call", to_wire(result), EXIT_TOOL_ERROR if result.is_error else EXIT_OK


class _UsageError(Exception):
    pass


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers], *[["" if c is None else str(c) for c in r] for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_table(kind: str, data: Any) -> str:
    """The human-readable form of a command's JSON output."""
    rows: list[tuple[object, ...]]
    if kind == "room":
        rows = [(s["name"], s["role"], s["a2c_version"], s["sid"]) for s in data]
        return _table(("NAME", "ROLE", "A2C", "SID"), rows)
    if kind == "tools":
        rows = [
            (t["name"], ",".join((t["tool_meta"] or {}).get("tags") or []), t["description"])
            for t in data
        ]
        return _table(("TOOL", "TAGS", "DESCRIPTION"), rows)
    if kind == "config":
        rows = [
            (name, server["type"], "yes" if server.get("disabled") else "no")
            for name, server in data["servers"].items()
        ]
        return _table(("SERVER", "TYPE", "DISABLED"), rows)
    if kind == "desktop":
        return "\n\n".join(f"--- {i + 1} ---\n{d}" for i, d in enumerate(data)) or "(empty)"
    if kind == "resources":
        resources = [from_wire(A2CResource, r) for r in data["resources"]]
        rows = [(r.uri, r.name, r.mime_type, f"{resource_priority(r):.2f}") for r in resources]
        text = _table(("URI", "NAME", "MIME", "PRIORITY"), rows)
        if data.get("next_cursor"):
            text += f"\n(next cursor: {data['next_cursor']})"
        return text
    if kind == "call":
        result = from_wire(CallToolResult, data)
        body = result_text(result) or json.dumps(data, ensure_ascii=False, indent=2)
        if result.is_error:
            return f"tool error {result_error_code(result) or ''}".rstrip() + f": {body}"
        return body
    return json.dumps(data, ensure_ascii=False, indent=2)


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Run ``a2c-agent``; returns the exit code."""
    out = stdout or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        kind, data, code = asyncio.run(_run(args))
    except _UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"a2c-agent: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RemoteError as exc:
        print(f"a2c-agent: error {exc.code}: {exc.message}", file=sys.stderr)
        if exc.args and str(exc) != f"[{exc.code}] {exc.message}":
            print(f"a2c-agent: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except (A2CError, ValueError) as exc:
        print(f"a2c-agent: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    as_table = args.output == "table" or (args.output is None and out.isatty())
    print(render_table(kind, data) if as_table else json.dumps(data, ensure_ascii=False), file=out)
    return code
