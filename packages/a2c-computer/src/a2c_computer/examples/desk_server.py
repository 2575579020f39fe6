"""Example stdio MCP server with tools and v0.2 ``window://`` resources.

Run it through a Computer config entry::

    {"type": "stdio", "name": "desk",
     "server_parameters": {"command": "python",
                           "args": ["-m", "a2c_computer.examples.desk_server"]}}

Windows (metadata in ``annotations`` / ``_meta``, never in the URI):

* ``window://org.a2c.example.desk/clock`` — the time at each read; with ``--tick S`` it
  also sends ``resources/updated`` to subscribers every S seconds (off by default: each
  one becomes a ``notify:update_desktop`` to the office's Agent, which a long-running
  example should not send every few seconds);
* ``window://org.a2c.example.desk/notes`` — notes added with the ``note_add`` tool;
* ``window://org.a2c.example.desk/panel/<name>`` — panels opened with ``panel_open``
  (the window set changes: ``resources/list_changed``).

Tools: ``note_add``, ``notes_clear``, ``panel_open``, ``panel_close``, ``roll_dice``, and
``wait`` (sleeps ``seconds``; shows timeouts and cancellation).

Both MCP eras (mcp 2): a 2025-11-25 client subscribes with ``resources/subscribe`` and gets
``resources/updated`` on its session; a 2026-07-28 client opens ``subscriptions/listen``
and gets the same notifications there (through the server's subscription bus). The server
sends each change both ways.

Skill (protocol 0.2.1, ``resources`` staging mode): ``skill://org.a2c.example.desk/desk-notes``
with ``_meta.source: "resources"``; its files are the sub-resources under that URI
(``SKILL.md`` and ``references/tools.md``), which the Computer reads and stages. A Computer
offers it to Agents as ``mcp:desk:desk-notes``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
from typing import Any
from urllib.parse import quote

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

HOST = "org.a2c.example.desk"
CLOCK = f"window://{HOST}/clock"
NOTES = f"window://{HOST}/notes"
SKILL = f"skill://{HOST}/desk-notes"
#: The skill's files (relative path -> text), served as sub-resources of ``SKILL``.
SKILL_FILES = {
    "SKILL.md": (
        "---\nname: desk-notes\n"
        "description: Keep a shared note list on the desk and show it as a window.\n"
        "allowed-tools: [note_add, notes_clear]\n---\n"
        "# Desk notes\n\nAdd a note with `note_add`; it appears in the notes window.\n"
        "Clear them with `notes_clear`. Details: references/tools.md.\n"
    ),
    "references/tools.md": (
        '# Tools\n\n- `note_add {"text": ...}` appends a note.\n'
        "- `notes_clear {}` removes every note.\n"
    ),
}


class Desk:
    """The server's state: notes, open panels and who follows the changes."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.panels: dict[str, str] = {}
        #: 2025-11-25 clients: the URIs subscribed to, and the session to tell.
        self.subscribed: set[str] = set()
        self.session: ServerSession | None = None
        #: 2026-07-28 clients: their subscriptions/listen streams hear from this bus.
        self.bus = InMemorySubscriptionBus()

    def resources(self) -> list[types.Resource]:
        def window(uri: str, name: str, priority: float, **meta: Any) -> types.Resource:
            return types.Resource(
                uri=uri,
                name=name,
                mime_type="text/plain",
                annotations=types.Annotations(priority=priority, audience=["assistant"]),
                _meta=meta or None,
            )

        items = [window(CLOCK, "Clock", 0.2), window(NOTES, "Notes", 0.8)]
        items += [window(f"{_panel_uri(p)}", f"Panel {p}", 0.5) for p in sorted(self.panels)]
        items.append(
            types.Resource(
                uri=SKILL,
                name="desk-notes",
                annotations=types.Annotations(audience=["assistant"]),
                _meta={"source": "resources", "version": "1.0.0"},
            )
        )
        items += [
            types.Resource(uri=f"{SKILL}/{path}", name=path, mime_type="text/markdown")
            for path in SKILL_FILES
        ]
        return items

    def read(self, uri: str) -> str:
        if uri == CLOCK:
            return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        if uri == NOTES:
            return "\n".join(f"- {n}" for n in self.notes) or "(no notes)"
        for name, body in self.panels.items():
            if uri == _panel_uri(name):
                return body
        if uri.startswith(f"{SKILL}/") and uri[len(SKILL) + 1 :] in SKILL_FILES:
            return SKILL_FILES[uri[len(SKILL) + 1 :]]
        raise ValueError(f"unknown resource {uri}")

    async def updated(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))
        if self.session is not None and uri in self.subscribed:
            await self.session.send_resource_updated(uri)

    async def list_changed(self) -> None:
        await self.bus.publish(ResourcesListChanged())
        if self.session is not None:
            await self.session.send_resource_list_changed()


def _panel_uri(name: str) -> str:
    return f"window://{HOST}/panel/{quote(name, safe='')}"


def _tool(name: str, description: str, props: dict[str, Any]) -> types.Tool:
    return types.Tool(
        name=name,
        description=description,
        input_schema={"type": "object", "properties": props},
    )


TOOLS = [
    _tool("note_add", "Add a note to the notes window.", {"text": {"type": "string"}}),
    _tool("notes_clear", "Remove every note.", {}),
    _tool(
        "panel_open",
        "Open a panel window.",
        {"name": {"type": "string"}, "text": {"type": "string"}},
    ),
    _tool("panel_close", "Close a panel window.", {"name": {"type": "string"}}),
    _tool("roll_dice", "Roll a die.", {"sides": {"type": "integer"}}),
    _tool("wait", "Sleep for a number of seconds.", {"seconds": {"type": "number"}}),
]


async def _run_tool(desk: Desk, name: str, args: dict[str, Any]) -> str:
    if name == "note_add":
        desk.notes.append(str(args.get("text", "")))
        await desk.updated(NOTES)
        return f"{len(desk.notes)} note(s)"
    if name == "notes_clear":
        desk.notes.clear()
        await desk.updated(NOTES)
        return "cleared"
    if name == "panel_open":
        panel = str(args.get("name", "main"))
        desk.panels[panel] = str(args.get("text", f"panel {panel}"))
        await desk.list_changed()
        return f"opened {panel}"
    if name == "panel_close":
        desk.panels.pop(str(args.get("name", "")), None)
        await desk.list_changed()
        return "closed"
    if name == "roll_dice":
        return str(random.randint(1, max(int(args.get("sides", 6)), 1)))
    if name == "wait":
        seconds = min(max(float(args.get("seconds", 1)), 0.0), 3600.0)
        await anyio.sleep(seconds)
        return f"waited {seconds:g} s"
    raise ValueError(f"unknown tool {name}")


def build(desk: Desk) -> tuple[Server[Any], InitializationOptions]:
    """The low-level server of ``desk`` and its (2025-11-25) initialization options."""

    def note_session(ctx: ServerRequestContext[Any]) -> None:
        # 2026-07-28 requests have no session to push to; the bus reaches them instead.
        if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            desk.session = ctx.session

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        note_session(ctx)
        return types.ListResourcesResult(resources=desk.resources())

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        text = desk.read(params.uri)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, text=text)]
        )

    async def subscribe(
        ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        note_session(ctx)
        desk.subscribed.add(params.uri)
        return types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        desk.subscribed.discard(params.uri)
        return types.EmptyResult()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        note_session(ctx)
        try:
            reply = await _run_tool(desk, params.name, dict(params.arguments or {}))
        except ValueError as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(exc))], is_error=True
            )
        return types.CallToolResult(content=[types.TextContent(type="text", text=reply)])

    server: Server[Any] = Server(
        "a2c-example-desk",
        version="0.2.0",
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(desk.bus),
    )
    capabilities = types.ServerCapabilities(
        tools=types.ToolsCapability(list_changed=False),
        resources=types.ResourcesCapability(subscribe=True, list_changed=True),
    )
    return server, InitializationOptions(
        server_name="a2c-example-desk", server_version="0.2.0", capabilities=capabilities
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Example A2C desk MCP server (stdio)")
    parser.add_argument(
        "--tick",
        type=float,
        default=0.0,
        help="send the clock window's resources/updated every TICK seconds (default 0: never)",
    )
    args = parser.parse_args(argv)
    desk = Desk()
    server, options = build(desk)

    async def ticker() -> None:
        while args.tick > 0:
            await anyio.sleep(args.tick)
            await desk.updated(CLOCK)

    async def run() -> None:
        async with stdio_server() as (read, write), anyio.create_task_group() as group:
            group.start_soon(ticker)
            await server.run(read, write, options)
            group.cancel_scope.cancel()

    anyio.run(run)


if __name__ == "__main__":
    main()
