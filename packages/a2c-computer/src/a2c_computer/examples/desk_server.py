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

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from pydantic import AnyUrl

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
    """The server's state: notes, open panels and subscribers."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.panels: dict[str, str] = {}
        self.subscribed: set[str] = set()
        self.session: ServerSession | None = None

    def resources(self) -> list[types.Resource]:
        def window(uri: str, name: str, priority: float, **meta: Any) -> types.Resource:
            return types.Resource(
                uri=AnyUrl(uri),
                name=name,
                mimeType="text/plain",
                annotations=types.Annotations(priority=priority, audience=["assistant"]),
                _meta=meta or None,
            )

        items = [window(CLOCK, "Clock", 0.2), window(NOTES, "Notes", 0.8)]
        items += [window(f"{_panel_uri(p)}", f"Panel {p}", 0.5) for p in sorted(self.panels)]
        items.append(
            types.Resource(
                uri=AnyUrl(SKILL),
                name="desk-notes",
                annotations=types.Annotations(audience=["assistant"]),
                _meta={"source": "resources", "version": "1.0.0"},
            )
        )
        items += [
            types.Resource(uri=AnyUrl(f"{SKILL}/{path}"), name=path, mimeType="text/markdown")
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
        if self.session is not None and uri in self.subscribed:
            await self.session.send_resource_updated(AnyUrl(uri))

    async def list_changed(self) -> None:
        if self.session is not None:
            await self.session.send_resource_list_changed()


def _panel_uri(name: str) -> str:
    from urllib.parse import quote

    return f"window://{HOST}/panel/{quote(name, safe='')}"


def build(desk: Desk) -> tuple[Server[Any, Any], InitializationOptions]:
    server: Server[Any, Any] = Server("a2c-example-desk")

    @server.list_resources()  # type: ignore[no-untyped-call,untyped-decorator]
    async def list_resources() -> list[types.Resource]:
        desk.session = server.request_context.session
        return desk.resources()

    @server.read_resource()  # type: ignore[no-untyped-call,untyped-decorator]
    async def read_resource(uri: AnyUrl) -> str:
        return desk.read(str(uri))

    @server.subscribe_resource()  # type: ignore[no-untyped-call,untyped-decorator]
    async def subscribe(uri: AnyUrl) -> None:
        desk.session = server.request_context.session
        desk.subscribed.add(str(uri))

    @server.unsubscribe_resource()  # type: ignore[no-untyped-call,untyped-decorator]
    async def unsubscribe(uri: AnyUrl) -> None:
        desk.subscribed.discard(str(uri))

    @server.list_tools()  # type: ignore[no-untyped-call,untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        def tool(name: str, description: str, props: dict[str, Any]) -> types.Tool:
            return types.Tool(
                name=name,
                description=description,
                inputSchema={"type": "object", "properties": props},
            )

        return [
            tool("note_add", "Add a note to the notes window.", {"text": {"type": "string"}}),
            tool("notes_clear", "Remove every note.", {}),
            tool(
                "panel_open",
                "Open a panel window.",
                {"name": {"type": "string"}, "text": {"type": "string"}},
            ),
            tool("panel_close", "Close a panel window.", {"name": {"type": "string"}}),
            tool("roll_dice", "Roll a die.", {"sides": {"type": "integer"}}),
            tool("wait", "Sleep for a number of seconds.", {"seconds": {"type": "number"}}),
        ]

    @server.call_tool()  # type: ignore[untyped-decorator]
    async def call_tool(name: str, args: dict[str, Any]) -> list[types.TextContent]:
        desk.session = server.request_context.session
        if name == "note_add":
            desk.notes.append(str(args.get("text", "")))
            await desk.updated(NOTES)
            reply = f"{len(desk.notes)} note(s)"
        elif name == "notes_clear":
            desk.notes.clear()
            await desk.updated(NOTES)
            reply = "cleared"
        elif name == "panel_open":
            panel = str(args.get("name", "main"))
            desk.panels[panel] = str(args.get("text", f"panel {panel}"))
            await desk.list_changed()
            reply = f"opened {panel}"
        elif name == "panel_close":
            desk.panels.pop(str(args.get("name", "")), None)
            await desk.list_changed()
            reply = "closed"
        elif name == "roll_dice":
            reply = str(random.randint(1, max(int(args.get("sides", 6)), 1)))
        elif name == "wait":
            seconds = min(max(float(args.get("seconds", 1)), 0.0), 3600.0)
            await anyio.sleep(seconds)
            reply = f"waited {seconds:g} s"
        else:
            raise ValueError(f"unknown tool {name}")
        return [types.TextContent(type="text", text=reply)]

    capabilities = types.ServerCapabilities(
        tools=types.ToolsCapability(listChanged=False),
        resources=types.ResourcesCapability(subscribe=True, listChanged=True),
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
