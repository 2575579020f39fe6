"""``a2c-agent``: poke a deployment from the command line, as an Agent.

::

    a2c-agent --server URL --office ID [--token T] room
    a2c-agent --server URL --office ID tools COMPUTER
    a2c-agent --server URL --office ID config COMPUTER
    a2c-agent --server URL --office ID desktop COMPUTER [--size N] [--window URI]
    a2c-agent --server URL --office ID resources COMPUTER SERVER [--all] [--cursor C]
    a2c-agent --server URL --office ID call COMPUTER TOOL [JSON] [--timeout S] [--save-dir D]
                                              [--answer V]... [--sample T]... [--no-prompt]
    a2c-agent --server URL --office ID blob COMPUTER HANDLE -o FILE
    a2c-agent --server URL --office ID put COMPUTER FILE [--name NAME]
    a2c-agent --server URL --office ID skills COMPUTER
    a2c-agent --server URL --office ID skill COMPUTER NAME [REL_PATH] [-o FILE]
    a2c-agent --server URL --office ID watch [--count N] [--for S] [--console]
    a2c-agent --server URL --office ID mcp [--http HOST:PORT] [--computer NAME]...

``call`` writes each binary item of the result (image, audio, embedded blob; restored from
its blob handle when it travelled by one) to a new file ``<tool>-<n>.<ext>`` in
``--save-dir`` (default: a new private directory under the system temp dir, made only for
a result with binary items; ``<tool>-<n>-<k>.<ext>`` when that name is taken: nothing is
overwritten), says where on stderr, and prints the item with ``data`` emptied and
``_meta.a2c_saved_to`` naming the file. Output paths are checked before anything is sent (see
:mod:`a2c_agent._cli._dest`); ``blob`` and ``skill`` replace an existing FILE only with
``--overwrite``. ``blob`` pulls one blob
into FILE, verified, with a progress bar on stderr when that is a terminal. ``skills`` lists
a Computer's skills; ``put`` uploads FILE to a Computer's landing dir (SHA-256 checked, a
progress bar on a terminal) and prints where it landed there; ``skill`` prints one skill
file (``SKILL.md`` by default) when it is text, and writes binary files only to ``-o FILE``
or a pipe, never to a terminal. When the tool asks for input (a form, a URL to visit, a
model's reply), ``call`` answers from ``--answer``/``--sample``, or asks on the terminal, or
declines (see :mod:`a2c_agent._cli._input`).

``--server``, ``--office`` and ``--token`` default to ``A2C_SERVER_URL``, ``A2C_OFFICE`` and
``A2C_TOKEN``; ``--token-file`` (``A2C_TOKEN_FILE``) reads the token from a file at every
connect instead. Output is JSON, or a readable table when stdout is a terminal (``--json`` /
``--table`` force one). Exit codes are listed in :data:`a2c_agent._cli._args.EXIT_CODES`
(and by ``--help``): 0 success; 1 an error (its message is printed on stderr, at once for a
refusal: a refused token or version is never retried); 2 bad usage; 3 the tool ran but
returned a result with ``isError``.

The office may hold only one Agent: this command joins it as ``--name`` (default
``a2c-agent-cli-<6 hex>``, new each run), so it cannot run while another Agent occupies
the office; except ``watch --console``, which follows the office through the Server's
console feed and joins nothing (:mod:`a2c_agent._cli._observe`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from a2c_agent._bridge import main as bridge_main
from a2c_agent._exceptions import JoinOfficeError
from a2c_agent._rpc import _otel as otel
from a2c_agent._session._connection import AuthSource
from a2c_agent._types import AgentTool
from a2c_agent._upload._cli import put_command, render_put
from a2c_protocol import A2CError, RemoteError, to_wire, token_file_auth, traces_endpoint

from ._args import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    build_parser,
    parse_args,
)
from ._arguments import missing_arguments_problem
from ._dest import write_file
from ._files import ProgressBar, save_binaries
from ._input import CliInput
from ._progress import ToolProgressView
from ._render import desktop_hint, render_table
from ._skill import RAW, skill_command
from ._visible import visible
from ._watch import watch

# The Agent (and python-socketio with it) loads when a command connects: ``--help``, a usage
# error or a refused destination answer without it.
if TYPE_CHECKING:
    from a2c_agent._agent import AsyncAgent

__all__ = ["build_parser", "main", "render_table"]


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


async def _command(
    agent: AsyncAgent, args: argparse.Namespace, out: TextIO
) -> tuple[str, Any, int]:
    """Do a one-shot command; returns (kind, JSON-ready data, exit code)."""
    command = args.command
    if command == "room":
        return "room", [to_wire(s) for s in await agent.list_room()], EXIT_OK
    if command == "tools":
        return "tools", [_tool_json(t) for t in await agent.get_tools(args.computer)], EXIT_OK
    if command == "config":
        return "config", to_wire(await agent.get_config(args.computer)), EXIT_OK
    if command == "desktop":
        desktops = await agent.get_desktop(args.computer, args.size, args.window)
        if not desktops:
            print(f"a2c-agent: hint: {desktop_hint(args.computer)}", file=sys.stderr)
        return "desktop", desktops, EXIT_OK
    if command == "resources":
        if args.all:
            items = [r async for r in agent.iter_resources(args.computer, args.mcp_server)]
            return "resources", {"resources": to_wire(items)}, EXIT_OK
        page = await agent.get_resources(args.computer, args.mcp_server, args.cursor)
        data = {"resources": to_wire(list(page.resources)), "next_cursor": page.next_cursor}
        return "resources", data, EXIT_OK
    if command == "blob":
        return "blob", await _download(agent, args), EXIT_OK
    if command == "put":
        return "put", await put_command(agent, args), EXIT_OK
    if command == "skills":
        return "skills", [to_wire(s) for s in await agent.get_skills(args.computer)], EXIT_OK
    if command == "skill":
        kind, data = await skill_command(agent, args, out)
        return kind, data, EXIT_OK
    if args.params is None:  # no JSON given: {} only if the tool's schema allows it
        problem = missing_arguments_problem(
            args.computer, args.tool, await agent.get_tools(args.computer)
        )
        if problem is not None:
            _note(f"error: {problem}")
            return RAW, None, EXIT_USAGE
    view = ToolProgressView(sys.stderr, bar=sys.stderr.isatty())
    req_id = uuid.uuid4().hex
    asking = sys.stdin is not None and sys.stdin.isatty() and not args.no_prompt
    on_input = CliInput(
        args, err=sys.stderr, read=sys.stdin.readline if asking else None,
        before_prompt=view.finish,
    )  # fmt: skip
    try:
        result = await agent.call_tool(
            args.computer, args.tool, args.params_object, timeout=args.timeout,
            on_progress=view, req_id=req_id,
            timeout_resets_on_progress=args.timeout_resets_on_progress, on_input=on_input,
        )  # fmt: skip
    except asyncio.CancelledError:
        # Ctrl-C: the SDK has sent the cancel by now; say so, the user cannot see it.
        view.finish()
        _note(f"interrupted: cancel sent to {args.computer} for {args.tool!r} (req_id {req_id})")
        raise
    finally:
        view.finish()
    data = await asyncio.to_thread(
        save_binaries, to_wire(result), args.save_dir and Path(args.save_dir), args.tool, _note
    )
    if on_input.exchanges:  # --json shows what was asked and answered
        data["input_requests"] = on_input.exchanges
    return "call", data, EXIT_TOOL_ERROR if result.is_error else EXIT_OK


def _note(line: str) -> None:
    print(f"a2c-agent: {line}", file=sys.stderr, flush=True)


async def _download(agent: AsyncAgent, args: argparse.Namespace) -> dict[str, Any]:
    bar = ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    blob = await agent.read_blob(
        args.computer, args.handle, progress=bar.update if bar is not None else None
    )
    if bar is not None:
        bar.finish()
    await asyncio.to_thread(write_file, args.output, blob.data, overwrite=args.overwrite)
    return {
        "file": args.output,
        "size": blob.size,
        "sha256": blob.sha256,
        "mime_type": blob.mime_type,
    }


def _auth(args: argparse.Namespace) -> AuthSource:
    if args.token_file:
        return token_file_auth(args.token_file)
    return {"token": args.token} if args.token else None


async def _run(args: argparse.Namespace, out: TextIO, as_table: bool) -> int:
    from a2c_agent._agent import AsyncAgent

    agent = AsyncAgent(
        args.server,
        name=args.name,
        auth=_auth(args),
        socketio_path=args.socketio_path,
        request_timeout=args.request_timeout,
        tool_cache=False,
        # A long-lived watch rides out a Server restart, and a call refused unsent by a
        # node shutting down is sent again on the next connection (within --timeout); a
        # refusal still ends either.
        reconnect=args.command in ("watch", "call"),
        protocol=args.protocol,
    )
    async with agent:
        await agent.join_office(args.office)
        if args.command == "watch":
            return await watch(
                agent, out=out, as_table=as_table, count=args.count, duration=args.duration
            )
        kind, data, code = await _command(agent, args, out)
        if kind == RAW:
            return code
        tools = None
        if as_table and kind == "config":  # the STATUS column counts each server's tools
            tools = [_tool_json(t) for t in await agent.get_tools(args.computer)]
    if as_table and kind == "put":
        text = render_put(data)
    elif as_table:
        width = shutil.get_terminal_size().columns
        # Peer text read on a terminal: shown, never obeyed (JSON escapes C0 itself).
        text = visible(render_table(kind, data, width=width, tools=tools))
    else:
        text = json.dumps(data, ensure_ascii=False)
    print(text, file=out, flush=True)
    return code


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout may not be a real file (tests)
        pass


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run ``a2c-agent``; returns the exit code (see ``a2c-agent --help``)."""
    out = stdout or sys.stdout
    env = os.environ if environ is None else environ
    try:
        _, args = parse_args(argv, env)
    except SystemExit as exc:  # argparse: --help / --version (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command == "mcp":  # a long-lived MCP server, not a one-shot command
        return bridge_main(args)
    as_table = args.output == "table" or (args.output is None and out.isatty())
    if args.command == "watch" and args.console:  # no Agent: the console's feed, no seat
        from ._observe import main as observe_main

        return observe_main(args, out, as_table, env)
    traced = environ is None and otel.configure_from_env()
    if traced:
        print(f"a2c-agent: tracing on: spans go to {traces_endpoint()}", file=sys.stderr)
    try:
        return _run_main(args, out, as_table)
    finally:
        if traced:
            otel.shutdown()


def _run_main(args: argparse.Namespace, out: TextIO, as_table: bool) -> int:
    try:
        return asyncio.run(_run(args, out, as_table))
    except BrokenPipeError:
        # The reader went away (`| head`): that ends the output, it is not an error.
        _silence_stdout()
        return EXIT_OK
    except RemoteError as exc:  # a peer's words: shown, never obeyed by the terminal
        print(f"a2c-agent: error {exc.code}: {visible(exc.message)}", file=sys.stderr)
        if str(exc) != f"[{exc.code}] {exc.message}":  # e.g. the versions of a 4008
            print(f"a2c-agent: {visible(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except (A2CError, ValueError) as exc:
        print(f"a2c-agent: error: {visible(exc)}", file=sys.stderr)
        if isinstance(exc, JoinOfficeError) and "already taken" in exc.reason:
            print(
                "a2c-agent: hint: another peer uses this name in the office: pass "
                "--name NAME to join under another one",
                file=sys.stderr,
            )
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
