"""Test MCP server (stdio) publishing skills in the three staging modes of protocol 0.2.1.

Run: ``python -m a2c_testkit.mcp_servers.skills [--mounted DIR] [--archive URL ...]``.

- ``inline-guide`` (always): ``resources`` mode; its files (``SKILL.md``, a text
  reference and a small binary asset) are sub-resources read with ``resources/read``.
- ``--mounted DIR``: a package directory on this host, published in ``mounted`` mode
  (the skill's name is the directory's name).
- ``--archive URL --archive-name NAME [--archive-format tar.gz] [--archive-sha256 HEX]``:
  a package archive served over HTTP, published in ``archive`` mode.

``--down-while PATH``: exit at start while ``PATH`` exists (a restart that keeps failing).

Tools: ``remove_skill`` (``{"name": ...}``: stop publishing it and send
``resources/list_changed``), ``bump`` (``{"name": ...}``: change its ``_meta.version`` and
send ``resources/updated`` for its URI), ``touch`` (send ``resources/list_changed`` with
nothing changed), ``pid``.
"""

from __future__ import annotations

import argparse
import base64
import os
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions

from a2c_testkit.mcp_servers._kit import current_session, register_raw, run_stdio

__all__ = ["ASSET_BYTES", "INLINE_FILES", "build_server", "main"]

HOST = "org.a2c.test.skills"
#: The asset of ``inline-guide``: binary (not UTF-8), so it travels by blob handle.
ASSET_BYTES = bytes(range(256)) * 200
#: ``inline-guide``'s files as the server publishes them (relative path -> bytes).
INLINE_FILES: dict[str, bytes] = {
    "SKILL.md": (
        b"---\nname: inline-guide\ndescription: A skill served file by file as MCP resources.\n"
        b"allowed-tools: [echo]\n---\n"
        b"# Inline guide\nSee references/usage.md and assets/data.bin.\n"
    ),
    "references/usage.md": b"# Usage\nCall the echo tool.\n",
    "assets/data.bin": ASSET_BYTES,
}

_TOOLS = [
    {
        "name": "remove_skill",
        "description": "Stop publishing a skill (sends resources/list_changed).",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    {
        "name": "bump",
        "description": "Change a skill's version (sends resources/updated).",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    {
        "name": "touch",
        "description": "Send resources/list_changed without changing anything.",
        "inputSchema": {"type": "object"},
    },
    {"name": "pid", "description": "This server's process id.", "inputSchema": {"type": "object"}},
]


def _root(name: str, meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "uri": f"skill://{HOST}/{name}",
        "name": name,
        "annotations": {"audience": ["assistant"]},
        "_meta": {"version": "1.0.0", **meta},
    }


def build_server(args: argparse.Namespace) -> tuple[Server[Any], InitializationOptions]:
    server: Server[Any] = Server("a2c-test-skills")
    skills: dict[str, dict[str, Any]] = {
        "inline-guide": _root("inline-guide", {"source": "resources"})
    }
    if args.mounted:
        name = os.path.basename(os.path.normpath(args.mounted))
        skills[name] = _root(
            name, {"source": "mounted", "mount_dir": os.path.abspath(args.mounted)}
        )
    if args.archive:
        meta: dict[str, Any] = {
            "source": "archive",
            "archive_uri": args.archive,
            "archive_format": args.archive_format,
        }
        if args.archive_sha256:
            meta["archive_sha256"] = args.archive_sha256
        skills[args.archive_name] = _root(args.archive_name, meta)

    def listing() -> list[dict[str, Any]]:
        items = list(skills.values())
        if "inline-guide" in skills:
            items += [
                {"uri": f"skill://{HOST}/inline-guide/{path}", "name": path}
                for path in INLINE_FILES
            ]
        items.append({"uri": "file:///not/a/skill", "name": "plain resource"})
        return items

    async def list_resources(request: types.ListResourcesRequest) -> dict[str, Any]:
        return {"resources": listing()}

    async def read_resource(request: types.ReadResourceRequest) -> dict[str, Any]:
        uri = str(request.params.uri)
        prefix = f"skill://{HOST}/inline-guide/"
        data = INLINE_FILES.get(uri.removeprefix(prefix)) if uri.startswith(prefix) else None
        if data is None:
            return {"contents": []}
        try:
            return {"contents": [{"uri": uri, "text": data.decode("utf-8")}]}
        except UnicodeDecodeError:
            return {"contents": [{"uri": uri, "blob": base64.b64encode(data).decode()}]}

    async def subscribe(request: Any) -> dict[str, Any]:
        return {}

    async def list_tools(request: types.ListToolsRequest) -> dict[str, Any]:
        return {"tools": _TOOLS}

    async def call_tool(request: types.CallToolRequest) -> dict[str, Any]:
        name, args_ = request.params.name, request.params.arguments or {}
        session = current_session()
        target = str(args_.get("name", ""))
        if name == "remove_skill" and target in skills:
            del skills[target]
            await session.send_resource_list_changed()
            return {"content": [{"type": "text", "text": f"removed {target}"}], "isError": False}
        if name == "bump" and target in skills:
            skills[target]["_meta"]["version"] = "1.0.1"
            await session.send_resource_updated(skills[target]["uri"])
            return {"content": [{"type": "text", "text": f"bumped {target}"}], "isError": False}
        if name == "touch":
            await session.send_resource_list_changed()
            return {"content": [{"type": "text", "text": "touched"}], "isError": False}
        if name == "pid":
            return {"content": [{"type": "text", "text": str(os.getpid())}], "isError": False}
        return {"content": [{"type": "text", "text": f"cannot {name} {target!r}"}], "isError": True}

    register_raw(server, types.ListResourcesRequest, list_resources)
    register_raw(server, types.ReadResourceRequest, read_resource)
    register_raw(server, types.SubscribeRequest, subscribe)
    register_raw(server, types.UnsubscribeRequest, subscribe)
    register_raw(server, types.ListToolsRequest, list_tools)
    register_raw(server, types.CallToolRequest, call_tool)
    capabilities = types.ServerCapabilities(
        tools=types.ToolsCapability(list_changed=False),
        resources=types.ResourcesCapability(subscribe=True, list_changed=True),
    )
    return server, InitializationOptions(
        server_name="a2c-test-skills", server_version="0.2.3", capabilities=capabilities
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mounted")
    parser.add_argument("--archive")
    parser.add_argument("--archive-name", default="archived-skill")
    parser.add_argument("--archive-format", default="tar.gz")
    parser.add_argument("--archive-sha256")
    parser.add_argument("--down-while")
    args = parser.parse_args(argv)
    if args.down_while and os.path.exists(args.down_while):
        raise SystemExit(f"{args.down_while} exists: staying down")
    server, options = build_server(args)
    run_stdio(server, options)


if __name__ == "__main__":
    main()
