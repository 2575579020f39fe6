"""Scene-driven MCP server for the integration suite, over stdio or Streamable HTTP.

Run: ``python -m a2c_testkit.mcp_servers.scene SCENE.json`` (stdio) or
``python -m a2c_testkit.mcp_servers.scene SCENE.json --http-port 0 --announce`` (Streamable
HTTP at ``/mcp``; prints ``PORT <n>`` once listening).

The scene file describes what the server exposes, so each test states its windows inline::

    {"name": "scene-a", "resources": true, "subscribe": true, "page_size": 100,
     "windows": [{"uri": "window://org.example.a/main", "name": "Main", "text": "hello",
                  "annotations": {"priority": 0.7, "audience": ["assistant"]},
                  "_meta": {"fullscreen": false}}],
     "other_resources": [{"uri": "note://org.example.a/readme", "name": "Readme"}]}

Windows are listed raw (a query in a URI or a priority of 80 goes out as written). Tools:
``echo``, ``slow`` (sleeps; writes "started"/"cancelled" to ``marker``), ``crash`` (kills
the process), ``set_text`` (changes a window's text, sends ``resources/updated``),
``add_window`` / ``remove_window`` (send ``resources/list_changed``), ``pid``, and over HTTP
``secure`` (``Authorization: Bearer good`` passes, ``Bearer limited`` → HTTP 403, anything
else → HTTP 401, as an OAuth-protected server answers).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions
from starlette.types import ASGIApp, Receive, Scope, Send

from ._kit import (
    UpstreamGate,
    bearer_status,
    current_session,
    paged,
    register_raw,
    run_stdio,
    serve_http_forever,
)

__all__ = ["build_server", "main"]

_TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "slow",
        "description": "Sleep for `seconds`, observing cancellation.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "seconds": {"type": "number"},
                "marker": {"type": "string"},
                "runs": {"type": "string"},
                "id": {"type": "string"},
            },
        },
    },
    {"name": "crash", "description": "Kill this MCP server.", "inputSchema": {"type": "object"}},
    {
        "name": "set_text",
        "description": "Set a window's text and announce the update.",
        "inputSchema": {
            "type": "object",
            "properties": {"uri": {"type": "string"}, "text": {"type": "string"}},
            "required": ["uri", "text"],
        },
    },
    {
        "name": "add_window",
        "description": "Add a window (announces list_changed).",
        "inputSchema": {"type": "object", "properties": {"window": {"type": "object"}}},
    },
    {
        "name": "remove_window",
        "description": "Remove a window (announces list_changed).",
        "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}},
    },
    {"name": "pid", "description": "This process's id.", "inputSchema": {"type": "object"}},
    {
        "name": "secure",
        "description": "Needs upstream authorization.",
        "inputSchema": {"type": "object"},
    },
]


def _listing(window: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in window.items() if k != "text"}


def build_server(scene: dict[str, Any]) -> tuple[Server[Any], InitializationOptions]:
    name = str(scene.get("name", "scene"))
    server: Server[Any] = Server(name)
    windows: list[dict[str, Any]] = [dict(w) for w in scene.get("windows", [])]
    others: list[dict[str, Any]] = list(scene.get("other_resources", []))
    page_size = int(scene.get("page_size", 100))
    has_resources = bool(scene.get("resources", True))

    async def list_tools(request: types.ListToolsRequest) -> dict[str, Any]:
        return {"tools": _TOOLS}

    async def list_resources(request: types.ListResourcesRequest) -> dict[str, Any]:
        cursor = request.params.cursor if request.params else None
        page, nxt = paged([_listing(w) for w in windows] + others, cursor, max(page_size, 1))
        return {"resources": page, **({"nextCursor": nxt} if nxt else {})}

    async def read_resource(request: types.ReadResourceRequest) -> dict[str, Any]:
        uri = str(request.params.uri)
        for window in windows:
            if window["uri"] == uri:
                return {
                    "contents": [
                        {"uri": uri, "mimeType": "text/plain", "text": window.get("text", "")}
                    ]
                }
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"resource {uri}"}]}

    async def ok_empty(request: Any) -> dict[str, Any]:
        return {}

    async def call_tool(request: types.CallToolRequest) -> dict[str, Any]:
        tool = request.params.name
        args = request.params.arguments or {}
        session = current_session()

        def ok(text: str) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": text}], "isError": False}

        if tool == "echo":
            return ok(f"{name}: {args.get('text', '')}")
        if tool == "slow":
            marker = args.get("marker")
            if marker:
                Path(marker).write_text("started", encoding="utf-8")
            runs = args.get("runs")
            if runs:  # one line per run, appended: a call that ran twice shows twice
                with open(runs, "a", encoding="utf-8") as log:
                    log.write(f"{args.get('id', '')}\n")
            try:
                await anyio.sleep(float(args.get("seconds", 30)))
            except anyio.get_cancelled_exc_class():
                if marker:
                    Path(marker).write_text("cancelled", encoding="utf-8")
                raise
            return ok("slept")
        if tool == "crash":
            os._exit(3)
        if tool == "set_text":
            for window in windows:
                if window["uri"] == args.get("uri"):
                    window["text"] = str(args.get("text", ""))
                    await session.send_resource_updated(window["uri"])
                    return ok("updated")
            return {"content": [{"type": "text", "text": "no such window"}], "isError": True}
        if tool == "add_window":
            windows.append(dict(args["window"]))
            await session.send_resource_list_changed()
            return ok("added")
        if tool == "remove_window":
            windows[:] = [w for w in windows if w["uri"] != args.get("uri")]
            await session.send_resource_list_changed()
            return ok("removed")
        if tool == "pid":
            return ok(str(os.getpid()))
        if tool == "secure":
            return ok(f"{name}: secret data")
        return {"content": [{"type": "text", "text": f"unknown tool {tool}"}], "isError": True}

    register_raw(server, types.ListToolsRequest, list_tools)
    register_raw(server, types.CallToolRequest, call_tool)
    if has_resources:
        register_raw(server, types.ListResourcesRequest, list_resources)
        register_raw(server, types.ReadResourceRequest, read_resource)
        register_raw(server, types.SubscribeRequest, ok_empty)
        register_raw(server, types.UnsubscribeRequest, ok_empty)
    capabilities = types.ServerCapabilities(
        tools=types.ToolsCapability(list_changed=False),
        resources=(
            types.ResourcesCapability(
                subscribe=bool(scene.get("subscribe", True)), list_changed=True
            )
            if has_resources
            else None
        ),
    )
    options = InitializationOptions(
        server_name=name, server_version="0.2.0", capabilities=capabilities
    )
    return server, options


def _decide(tool: str, headers: Mapping[str, str]) -> int | None:
    return bearer_status(headers) if tool == "secure" else None


def _http_app(server: Server[Any], options: InitializationOptions) -> ASGIApp:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(app=server, stateless=False)
    server.create_initialization_options = lambda *a, **k: options  # type: ignore[method-assign]

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            async with manager.run():
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                await receive()
                await send({"type": "lifespan.shutdown.complete"})
            return
        if scope.get("path", "").startswith("/mcp"):
            await manager.handle_request(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    return UpstreamGate(app, _decide)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A2C scene MCP server (integration tests)")
    parser.add_argument("scene", type=Path)
    parser.add_argument("--http-port", type=int, default=None)
    parser.add_argument("--announce", action="store_true")
    args = parser.parse_args(argv)
    server, options = build_server(json.loads(args.scene.read_text(encoding="utf-8")))

    if args.http_port is None:
        run_stdio(server, options)
    else:
        serve_http_forever(_http_app(server, options), args.http_port, announce=args.announce)


if __name__ == "__main__":
    main()
