"""``uv run a2c-demo``: a guided tour of an A2C-SMCP 0.2 deployment in one command.

It starts a Server (unless ``--server`` names a running one), a Computer hosting the example
MCP server that ships with ``a2c-computer`` (a real stdio subprocess), and an Agent, then
walks through the protocol: handshake, office members, tools, a tool call, the desktop,
resource pages, a live desktop update, the Computer's skills, a tool that asks the user (an
MCP elicitation answered by the Agent's input handler through the office), a refused
handshake and a join refused because the office is outside the client's grant.
Everything it started is stopped (and everything it staged removed) before it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import socket
import sys
import tempfile
import textwrap
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from a2c_agent import (
    AsyncAgent,
    ElicitationRequest,
    ElicitationResponse,
    InputRefusal,
    InputRequest,
    InputResponse,
    JoinOfficeError,
    form_fields,
    result_text,
)
from a2c_computer import Computer, SkillSettings
from a2c_protocol import (
    PROTOCOL_VERSION,
    A2CError,
    Event,
    ProtocolVersionError,
    error_from_handshake_response,
)
from a2c_server import ServerSettings, create_app

from ._version import __version__

__all__ = ["main", "run_demo"]

COMPUTER = "demo-box"
MCP_SERVER = "desk"
ASKING_SERVER = "helpdesk"


def _say(title: str) -> None:
    print(f"\n── {title} " + "─" * max(0, 66 - len(title)), flush=True)


def _indent(text: str) -> str:
    return textwrap.indent(text, "    ")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def _local_server() -> AsyncIterator[str]:
    """The real Server app under uvicorn on a free loopback port.

    Its clients may join only ``demo-*`` offices (``--allow-offices demo-*``), so the tour
    can show a join outside that grant being refused.
    """
    port = _free_port()
    settings = ServerSettings(host="127.0.0.1", port=port, allow_offices=("demo-*",))
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # surfaces the startup error
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


def _computer_config() -> dict[str, Any]:
    return {
        "servers": {
            MCP_SERVER: {
                "type": "stdio",
                "name": MCP_SERVER,
                "default_tool_meta": {"auto_apply": True, "tags": ["demo"]},
                "server_parameters": {
                    "command": sys.executable,
                    "args": ["-m", "a2c_computer.examples.desk_server", "--tick", "2"],
                },
            },
            ASKING_SERVER: {
                "type": "stdio",
                "name": ASKING_SERVER,
                "default_tool_meta": {"auto_apply": True, "tags": ["demo"]},
                "server_parameters": {
                    "command": sys.executable,
                    "args": ["-m", "a2c_computer.examples.ask_server"],
                },
            },
        }
    }


async def _fill_in_the_form(request: InputRequest) -> InputResponse:
    """The demo's input handler: what a user would type into the MCP server's form."""
    origin = request.origin
    who = f"{origin.mcp_server} on {origin.computer}" if origin else "an MCP server"
    if isinstance(request, ElicitationRequest) and request.mode == "form":
        fields = ", ".join(field.name for field in form_fields(request.requested_schema or {}))
        print(f"    {who} asks: {request.message!r} (form fields: {fields})")
        answer = {"day": "2026-12-08", "minutes": 45}
        print(f"    the Agent's input handler answers {answer}")
        return ElicitationResponse.accept(answer)
    return InputRefusal("the demo answers forms only")


async def _wait_for(predicate: Any, timeout: float, what: str) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.05)
    del what


class DemoError(Exception):
    """Something the demo cannot go on without; its message is the one line printed."""


async def _health(server_url: str) -> dict[str, Any]:
    """The Server's ``/healthz``, or a DemoError saying in one line why it cannot be read."""
    hint = "start one with 'a2c-server', or leave out --server and the demo starts its own"
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.get(f"{server_url.rstrip('/')}/healthz")
        health = response.json()
    except httpx.HTTPError as exc:
        reason = str(exc).rstrip(".") or type(exc).__name__
        raise DemoError(f"cannot reach the Server at {server_url}: {reason}; {hint}") from exc
    except ValueError as exc:
        raise DemoError(
            f"{server_url} answered /healthz with HTTP {response.status_code} and no JSON: "
            f"is it an a2c-server? {hint}"
        ) from exc
    if not isinstance(health, dict):
        raise DemoError(f"{server_url}/healthz is not an a2c-server's answer: {health!r}")
    return health


async def run_demo(server_url: str | None = None) -> None:
    """Run the tour against ``server_url`` or a Server started here."""
    async with contextlib.AsyncExitStack() as stack:
        if server_url is None:
            server_url = await stack.enter_async_context(_local_server())
            started = "started here"
        else:
            started = "already running"
        office = f"demo-{uuid.uuid4()}"

        health = await _health(server_url)
        _say("1. Handshake")
        print(f"Server {server_url} ({started}) runs protocol {health.get('protocol_version')}.")
        print(f"This SDK speaks PROTOCOL_VERSION={PROTOCOL_VERSION} and adds "
              f"?a2c_version={PROTOCOL_VERSION} to every connection itself.")  # fmt: skip

        agent = await stack.enter_async_context(AsyncAgent(server_url, name="demo-agent"))
        await agent.join_office(office)
        # Skills of the example MCP server are staged into a throw-away directory; the
        # user's own skill folder is left out so the tour shows the same on every machine.
        staged = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="a2c-demo-")))
        computer = Computer(
            _computer_config(),
            name=COMPUTER,
            server_url=server_url,
            office_id=office,
            skills=SkillSettings(install_dir=staged / "skills", user_dir=None),
        )
        await stack.enter_async_context(computer)
        await _wait_for(lambda: agent.tools.get(COMPUTER), 60, "the Computer's tools")

        _say("2. Office members (server:list_room)")
        for member in await agent.list_room():
            print(f"    {member.role.value:<9} {member.name:<12} a2c_version={member.a2c_version}")

        _say(f"3. Tools of {COMPUTER} (client:get_tools, cached from notify:enter_office)")
        for tool in agent.tools[COMPUTER]:
            tags = ",".join(tool.tool_meta.tags or []) if tool.tool_meta else ""
            print(f"    {tool.name:<14} {tool.description}  [{tags}]")

        _say("4. A tool call (client:tool_call)")
        result = await agent.call_tool(
            COMPUTER, "note_add", {"text": "hello from the agent"}, timeout=30
        )
        print(f"    note_add → isError={result.is_error}: {result_text(result)}")
        dice = await agent.call_tool(COMPUTER, "roll_dice", {"sides": 6}, timeout=30)
        print(f"    roll_dice → {result_text(dice)}")

        _say("5. The desktop (client:get_desktop)")
        for entry in await agent.get_desktop(COMPUTER):
            print(_indent(entry), end="\n\n")

        _say(f"6. Resources of MCP server {MCP_SERVER!r} (client:get_resources)")
        cursor: str | None = None
        number = 0
        while True:
            page = await agent.get_resources(COMPUTER, MCP_SERVER, cursor)
            number += 1
            size, nxt = len(page.resources), page.next_cursor
            print(f"    page {number}: {size} resource(s), next_cursor={nxt!r}")
            for resource in page.resources:
                priority = (resource.annotations or {}).get("priority")
                print(f"      {resource.uri}  priority={priority}")
            if page.next_cursor is None:
                break
            cursor = page.next_cursor

        _say("7. A live desktop update (notify:update_desktop)")
        async with agent.notifications(Event.NOTIFY_UPDATE_DESKTOP) as updates:
            await agent.call_tool(
                COMPUTER, "panel_open", {"name": "status", "text": "all green"}, timeout=30
            )
            note = await asyncio.wait_for(updates.__anext__(), 60)
        print(f"    received {note.event.value} for computer={note.computer!r}")
        desktop = await agent.get_desktop(COMPUTER)
        print("    refreshed desktop now lists:")
        for entry in desktop:
            print(f"      {entry.splitlines()[0]}")

        _say(f"8. Skills of {COMPUTER} (client:get_skills, client:get_skill)")
        skills = await agent.get_skills(COMPUTER)
        async with asyncio.timeout(60):  # staged right after the MCP server's tools
            while not skills:
                await asyncio.sleep(0.1)
                skills = await agent.get_skills(COMPUTER)
        for skill in skills:
            print(f"    {skill.name:<22} source={skill.source} version={skill.version or '-'}")
            print(f"      {skill.description}")
        chosen = skills[0]
        skill_md = await agent.get_skill(COMPUTER, chosen.name)
        print(f"    {chosen.name} SKILL.md ({skill_md.size} bytes, sha256 checked, "
              "frontmatter removed by the Computer):")  # fmt: skip
        print(_indent(skill_md.text().rstrip()))

        _say("9. A tool that asks the user (an MCP elicitation through the office)")
        await _wait_for(
            lambda: any(t.name == "book_meeting" for t in agent.tools.get(COMPUTER, ())),
            60, "the helpdesk's tool",
        )  # fmt: skip
        booked = await agent.call_tool(
            COMPUTER, "book_meeting", {"topic": "demo review"}, timeout=30,
            on_input=_fill_in_the_form,
        )  # fmt: skip
        print(f"    book_meeting → isError={booked.is_error}: {result_text(booked)}")

        _say("10. A refused handshake (HTTP 400 + code 4008)")
        async with httpx.AsyncClient() as http:
            response = await http.get(
                f"{server_url}/socket.io/",
                params={"EIO": "4", "transport": "polling", "a2c_version": "0.1.0"},
            )
        print(f"    a client speaking 0.1.0 gets HTTP {response.status_code}, "
              f"X-A2C-Error-Code: {response.headers.get('x-a2c-error-code')}")  # fmt: skip
        print(_indent(json.dumps(response.json(), indent=2)))
        error = error_from_handshake_response(
            response.status_code, response.headers, response.content
        )
        if isinstance(error, ProtocolVersionError):
            accepted = f"{error.min_supported}..{error.max_supported}"
            print(f"    → ProtocolVersionError: server {error.server_version}, "
                  f"client {error.client_version}, accepts {accepted}")  # fmt: skip

        _say("11. A join outside the grant (server:join_office → Forbidden)")
        elsewhere = f"payroll-{uuid.uuid4()}"
        async with AsyncAgent(server_url, name="demo-intruder") as intruder:
            try:
                await intruder.join_office(elsewhere)
            except JoinOfficeError as exc:
                print(f"    demo-intruder joins {elsewhere!r}")
                print(f"    → [false, {exc.reason!r}]: nothing joined, nobody notified")
            else:
                print(f"    demo-intruder joined {elsewhere!r}: this Server lets every client "
                      "into every office (no JWT grants, no --allow-offices)")  # fmt: skip
                await intruder.leave_office()

        _say("Done")
        print("Stopping the Agent, the Computer (and its MCP server) and the Server.")


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``a2c-demo``."""
    parser = argparse.ArgumentParser(
        prog="a2c-demo", description="A guided tour of an A2C-SMCP 0.2 deployment."
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"a2c-demo {__version__} (A2C-SMCP protocol {PROTOCOL_VERSION})",
    )
    parser.add_argument(
        "--server", help="use this running Server (http://host:port) instead of starting one"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show the libraries' logs")
    args = parser.parse_args(argv)
    if args.server is not None and "://" not in args.server:
        parser.error(f"--server needs a scheme: did you mean http://{args.server}?")
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        asyncio.run(run_demo(args.server))
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except (DemoError, A2CError) as exc:  # one line, not a traceback of httpx internals
        print(f"a2c-demo: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
