"""Test MCP server (stdio) with tools and v0.2 windows, for the Computer's tests.

Run: ``python -m a2c_testkit.mcp_servers.desk [--profile full|conformant|legacy]
[--page-size N] [--host HOST] [--no-subscribe]``.

Tools: ``echo``, ``add``, ``fail`` (isError result), ``slow`` (sleeps; writes "started" to
``marker``, then "cancelled" when cancelled), ``crash`` (kills its own process), ``add_window`` /
``remove_window`` (change the window set → list_changed), ``relist`` (list_changed with the
same set), ``touch`` (resources/updated for any URI), ``add_tool`` (tools/list_changed),
``pid``, ``force_push``.

Profiles: ``full`` has windows with v0.2 annotations/_meta plus the awkward cases (a
``?priority=5`` query, an out-of-range priority, audience ``["user"]``, a blob-only window) and
a non-window resource; ``conformant`` has only clean windows; ``legacy`` has v0.1-style ones.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions

from a2c_testkit.mcp_servers._kit import current_session, paged, register_raw, run_stdio

__all__ = ["build_server", "main"]


def _profile_resources(profile: str, host: str) -> list[dict[str, Any]]:
    if profile == "conformant":
        return [
            {
                "uri": f"window://{host}/main",
                "name": "Main",
                "mimeType": "text/plain",
                "annotations": {"priority": 0.9, "audience": ["assistant"]},
            },
            {
                "uri": f"window://{host}/log",
                "name": "Log",
                "mimeType": "text/plain",
                "annotations": {"priority": 0.2, "audience": ["assistant"]},
                "_meta": {"fullscreen": False},
            },
        ]
    if profile == "legacy":
        return [
            {"uri": "window://Legacy_App/main?priority=80&fullscreen=1", "name": "Main"},
            {"uri": "window://Legacy_App/log", "name": "Log", "annotations": {"priority": 80}},
        ]
    return [
        {
            "uri": f"window://{host}/main",
            "name": "Main",
            "mimeType": "text/plain",
            "annotations": {"priority": 0.5, "audience": ["assistant"]},
        },
        {
            "uri": f"window://{host}/editor",
            "name": "Editor",
            "mimeType": "text/plain",
            "annotations": {
                "priority": 0.9,
                "audience": ["assistant"],
                "lastModified": "2026-03-02T10:15:00Z",
            },
            "_meta": {"fullscreen": False},
        },
        {
            "uri": f"window://{host}/query?priority=5",
            "name": "Query",
            "mimeType": "text/plain",
            "annotations": {"priority": 0.7, "audience": ["assistant"]},
        },
        {
            "uri": f"window://{host}/loud",
            "name": "Loud",
            "mimeType": "text/plain",
            "annotations": {"priority": 5, "audience": ["assistant"]},
        },
        {
            "uri": f"window://{host}/for-user",
            "name": "For user",
            "mimeType": "text/plain",
            "annotations": {"priority": 0.3, "audience": ["user"]},
        },
        {
            "uri": f"window://{host}/blob",
            "name": "Blob",
            "mimeType": "application/octet-stream",
            "annotations": {"priority": 0.95, "audience": ["assistant"]},
        },
        {"uri": "note://org.a2c.test/readme", "name": "Readme", "mimeType": "text/plain"},
    ]


_TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True},
        "_meta": {"org.a2c.test/owner": "desk", "org.a2c.test/rank": {"a": 1}},
    },
    {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        },
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}},
    },
    {"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}},
    {
        "name": "slow",
        "description": "Sleep, observing cancellation.",
        "inputSchema": {
            "type": "object",
            "properties": {"seconds": {"type": "number"}, "marker": {"type": "string"}},
        },
    },
    {
        "name": "crash",
        "description": "Kill this MCP server's process.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "add_window",
        "description": "Add a window.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
    {
        "name": "remove_window",
        "description": "Remove a window.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
    {
        "name": "relist",
        "description": "Send list_changed without changing the windows.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "touch",
        "description": "Send resources/updated for a URI.",
        "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}},
    },
    {
        "name": "add_tool",
        "description": "Add a tool named 'extra' and send tools/list_changed.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "force_push",
        "description": "A dangerous tool a config can forbid.",
        "inputSchema": {"type": "object"},
    },
    {"name": "pid", "description": "This process's id.", "inputSchema": {"type": "object"}},
    {
        "name": "log",
        "description": "Send an MCP log notification (level, data) to the client.",
        "inputSchema": {"type": "object"},
    },
]


def build_server(
    profile: str = "full",
    page_size: int = 100,
    host: str = "org.a2c.test.desk",
    subscribe: bool = True,
) -> tuple[Server[Any], InitializationOptions]:
    server: Server[Any] = Server("a2c-test-desk")
    resources = _profile_resources(profile, host)
    tools = list(_TOOLS)
    reads: dict[str, int] = {}

    async def list_tools(request: types.ListToolsRequest) -> dict[str, Any]:
        cursor = request.params.cursor if request.params else None
        page, nxt = paged(tools, cursor, max(page_size, 1))
        return {"tools": page, **({"nextCursor": nxt} if nxt else {})}

    async def list_resources(request: types.ListResourcesRequest) -> dict[str, Any]:
        cursor = request.params.cursor if request.params else None
        page, nxt = paged(resources, cursor, max(page_size, 1))
        return {"resources": page, **({"nextCursor": nxt} if nxt else {})}

    async def read_resource(request: types.ReadResourceRequest) -> dict[str, Any]:
        uri = str(request.params.uri)
        reads[uri] = reads.get(uri, 0) + 1
        if uri.endswith("/blob"):
            return {
                "contents": [{"uri": uri, "mimeType": "application/octet-stream", "blob": "AAEC"}]
            }
        name = uri.split("/")[-1].split("?")[0]
        return {
            "contents": [
                {"uri": uri, "mimeType": "text/plain", "text": f"{name} content #{reads[uri]}"}
            ]
        }

    async def subscribe_handler(request: types.SubscribeRequest) -> dict[str, Any]:
        return {}

    register_raw(server, types.ListToolsRequest, list_tools)
    register_raw(server, types.ListResourcesRequest, list_resources)
    register_raw(server, types.ReadResourceRequest, read_resource)
    register_raw(server, types.SubscribeRequest, subscribe_handler)
    register_raw(server, types.UnsubscribeRequest, subscribe_handler)

    async def call_tool(request: types.CallToolRequest) -> dict[str, Any]:
        name = request.params.name
        args = request.params.arguments or {}
        session = current_session()

        def ok(value: str, **extra: Any) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": value}], "isError": False, **extra}

        if name == "echo":
            return ok(str(args.get("text", "")))
        if name == "add":
            total = float(args.get("a", 0)) + float(args.get("b", 0))
            return ok(f"{total:g}", structuredContent={"sum": total})
        if name == "fail":
            return {
                "content": [{"type": "text", "text": "this tool always fails"}],
                "isError": True,
            }
        if name == "slow":
            marker = args.get("marker")
            if marker:
                with open(marker, "w", encoding="utf-8") as fh:
                    fh.write("started")
            try:
                await anyio.sleep(float(args.get("seconds", 30)))
            except anyio.get_cancelled_exc_class():
                if marker:
                    with open(marker, "w", encoding="utf-8") as fh:
                        fh.write("cancelled")
                raise
            return ok("slept")
        if name == "crash":
            os._exit(3)
        if name == "add_window":
            path = str(args.get("path", "new"))
            resources.insert(
                0,
                {
                    "uri": f"window://{host}/{path}",
                    "name": path,
                    "mimeType": "text/plain",
                    "annotations": {"priority": 0.4, "audience": ["assistant"]},
                },
            )
            await session.send_resource_list_changed()
            return ok("added")
        if name == "remove_window":
            path = str(args.get("path", ""))
            resources[:] = [r for r in resources if r["uri"] != f"window://{host}/{path}"]
            await session.send_resource_list_changed()
            return ok("removed")
        if name == "relist":
            await session.send_resource_list_changed()
            return ok("relisted")
        if name == "touch":
            await session.send_resource_updated(str(args.get("uri")))
            return ok("touched")
        if name == "add_tool":
            if not any(t["name"] == "extra" for t in tools):
                tools.append(
                    {
                        "name": "extra",
                        "description": "Added at runtime.",
                        "inputSchema": {"type": "object"},
                    }
                )
            await session.send_tool_list_changed()
            return ok("tool added")
        if name == "extra":
            return ok("extra ran")
        if name == "pid":
            return ok(str(os.getpid()))
        if name == "log":
            level = str(args.get("level", "info"))
            await session.send_log_message(level, args.get("data", ""), logger="desk")  # type: ignore[arg-type]
            return ok("logged")
        if name == "force_push":
            return ok("pushed!")
        return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}

    register_raw(server, types.CallToolRequest, call_tool)
    capabilities = types.ServerCapabilities(
        tools=types.ToolsCapability(list_changed=True),
        resources=types.ResourcesCapability(subscribe=subscribe, list_changed=True),
    )
    options = InitializationOptions(
        server_name="a2c-test-desk", server_version="0.2.0", capabilities=capabilities
    )
    _ = NotificationOptions
    return server, options


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="full", choices=["full", "conformant", "legacy"])
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--host", default="org.a2c.test.desk")
    parser.add_argument("--no-subscribe", action="store_true")
    args = parser.parse_args(argv)
    server, options = build_server(args.profile, args.page_size, args.host, not args.no_subscribe)
    run_stdio(server, options)


if __name__ == "__main__":
    main()
