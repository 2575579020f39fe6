"""The command line of ``a2c-agent``: flags, environment variables, usage checks.

Rules:

* ``--server``, ``--office`` and ``--token`` fall back to ``A2C_SERVER_URL``,
  ``A2C_OFFICE`` and ``A2C_TOKEN``; a flag wins over its variable. A variable that is set
  but empty (or blank) is a usage error (an empty token would silently mean "no token"),
  the rule of ``a2c-server`` and ``a2c-computer`` too.
* Every mistake the user can fix on the command line is a usage error (exit 2) found before
  connecting: a URL without ``http://``, a timeout that is not a positive number, a JSON
  argument that is not an object, a ``--window`` that is not a plain window URI, an output
  destination that cannot be written (see :mod:`a2c_agent._cli._dest`).
* ``--server`` and ``--office`` are needed, from the flag or the environment; the usage line
  shows them as options because the environment may supply them.
* the default ``--name`` is ``a2c-agent-cli-<6 hex>``, new for every run: two runs (in two
  offices, or a ``watch`` next to a one-shot command) never take each other's name; except
  when the token is a JWT whose grant fixes the name (``a2c.name``): the Server refuses any
  other, so that one is the default.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import math
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from a2c_agent._bridge import add_parser as add_bridge_parser
from a2c_agent._bridge._args import HTTP_TOKEN_ENV
from a2c_agent._session._connection import versioned_url
from a2c_agent._upload._cli import add_put_parser, put_problem
from a2c_agent._version import __version__
from a2c_protocol import InvalidWindowURIError, WindowURI, token_flags_problem

from ._dest import dir_problem, file_problem
from ._input import add_input_args, read_input_args

__all__ = ["DEFAULT_NAME_PREFIX", "ENV_VARS", "EXIT_CODES", "build_parser", "parse_args"]

#: The default ``--name`` is this plus 6 random hex digits.
DEFAULT_NAME_PREFIX: Final = "a2c-agent-cli-"

#: flag dest → environment variable it falls back to.
ENV_VARS: Final[Mapping[str, str]] = {
    "server": "A2C_SERVER_URL",
    "office": "A2C_OFFICE",
    "token": "A2C_TOKEN",
    "token_file": "A2C_TOKEN_FILE",
}

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_TOOL_ERROR: Final = 3
EXIT_INTERRUPTED: Final = 130

#: Exit code → meaning, as printed by ``--help``.
EXIT_CODES: Final[Mapping[int, str]] = {
    EXIT_OK: "success (also when the reader of the output went away, e.g. '| head')",
    EXIT_ERROR: "an error: unreachable or refusing Server (bad token, wrong version), "
    "a refused request; the reason is printed on stderr",
    EXIT_USAGE: "bad usage: unknown flag, missing --server/--office, a URL without "
    "http://, a timeout that is not > 0, JSON that is not an object, an output file or "
    "directory that cannot be written (checked before anything is sent), a call without "
    "JSON to a tool whose input schema requires arguments",
    EXIT_TOOL_ERROR: "the tool ran but returned a result with isError (it is printed)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text!r}")
    return value


def _epilog() -> str:
    env = "\n".join(f"  {var:<15} default for {_flag(dest)}" for dest, var in ENV_VARS.items())
    codes = "\n".join(f"  {code:<4} {text}" for code, text in EXIT_CODES.items())
    return (
        "environment (a flag wins over its variable; prefer A2C_TOKEN to --token, which\n"
        "other local users can see in the process list):\n"
        f"{env}\n\nexit codes:\n{codes}\n\n"
        "Output is JSON, or a table when stdout is a terminal (--json / --table force one)."
    )


def build_parser(environ: Mapping[str, str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``a2c-agent``; ``environ`` supplies the fallbacks."""
    env = environ or {}
    parser = argparse.ArgumentParser(
        prog="a2c-agent",
        description="Talk to an A2C-SMCP 0.2 deployment as an Agent.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"a2c-agent {__version__}")

    def from_env(flag: str, dest: str, help_text: str) -> None:
        var = ENV_VARS[dest]
        parser.add_argument(flag, dest=dest, default=env.get(var), help=f"{help_text} [env {var}]")

    # Not argparse-required: the environment may supply them (parse_args checks).
    from_env("--server", "server", "Server URL, e.g. http://127.0.0.1:8000 (needed)")
    from_env("--office", "office", "office to join (needed)")
    from_env("--token", "token", "sent as auth.token")
    from_env("--token-file", "token_file",
             "file holding the token, read again at every (re)connect (for short-lived "
             "tokens renewed by another process)")  # fmt: skip
    parser.add_argument(
        "--name",
        help=f"agent name in the office (default: {DEFAULT_NAME_PREFIX}XXXXXX, new each run)",
    )
    parser.add_argument("--socketio-path", default="socket.io", help="Engine.IO mount path")
    parser.add_argument(
        "--request-timeout", type=_positive_float, default=30.0,
        help="seconds to wait for answers (> 0)",
    )  # fmt: skip
    parser.add_argument(
        "--protocol", choices=("0.2", "0.4"),
        help="speak only this protocol line (default: 0.2, then 0.4 when the Server "
        "refuses 0.2 and accepts 0.4)",
    )  # fmt: skip
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", dest="output", action="store_const", const="json")
    output.add_argument("--table", dest="output", action="store_const", const="table")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("room", help="list the office members")
    tools = commands.add_parser("tools", help="list a Computer's tools (and their MCP server)")
    tools.add_argument("computer")
    commands.add_parser("config", help="show a Computer's config").add_argument("computer")
    desktop = commands.add_parser("desktop", help="render a Computer's desktop")
    desktop.add_argument("computer")
    desktop.add_argument("--size", type=_positive_int, help="maximum number of windows")
    desktop.add_argument("--window", help="one window URI (no query or fragment)")
    resources = commands.add_parser("resources", help="list an MCP server's resources")
    resources.add_argument("computer")
    resources.add_argument("mcp_server")
    resources.add_argument("--all", action="store_true", help="follow next_cursor to the end")
    resources.add_argument("--cursor", help="page cursor")
    call = commands.add_parser("call", help="call a tool")
    call.add_argument("computer")
    call.add_argument("tool")
    call.add_argument(
        "params", nargs="?", default=None,
        help="tool arguments as a JSON object (leave it out for a tool that takes none)",
    )  # fmt: skip
    call.add_argument(
        "--timeout",
        type=_positive_float,
        default=60.0,
        help="tool timeout in seconds (> 0; default: 60)",
    )
    call.add_argument(
        "--timeout-resets-on-progress",
        action="store_true",
        help="each progress report of the tool starts the timeout again, so a long call that "
        "keeps reporting is not cut (the Server still stops waiting after its "
        "--max-tool-timeout)",
    )
    add_input_args(call)
    call.add_argument(
        "--save-dir",
        help="existing directory binary result items are written to, each under a free "
        "name <tool>-<n>.<ext>; nothing is ever overwritten (default: a new private "
        "directory under the system temp dir, made only for a result with binary items)",
    )
    blob = commands.add_parser("blob", help="download one blob by handle (SHA-256 checked)")
    blob.add_argument("computer")
    blob.add_argument("handle")
    blob.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="file to write (its directory must exist)",
    )
    blob.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
    add_put_parser(commands)
    skills = commands.add_parser("skills", help="list a Computer's skills")
    skills.add_argument("computer")
    skill = commands.add_parser(
        "skill", help="print one skill file (text), or save it with -o (SHA-256 checked)"
    )
    skill.add_argument("computer")
    skill.add_argument("name", help="the skill name exactly as 'skills' lists it")
    skill.add_argument("rel_path", nargs="?", default="SKILL.md", help="default: SKILL.md")
    skill.add_argument(
        "-o", "--output-file", dest="file", metavar="FILE",
        help="write the bytes to this file (its directory must exist)",
    )  # fmt: skip
    skill.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
    watch = commands.add_parser(
        "watch",
        help="print the office's notifications as they arrive (enter/leave, tools, "
        "desktop, config) until Ctrl-C",
    )
    watch.add_argument("--count", type=_positive_int, help="stop after this many notifications")
    watch.add_argument("--for", dest="duration", type=_positive_float, help="stop after S seconds")
    watch.add_argument(
        "--console", action="store_true",
        help="follow the office through the Server's console (a2c-server --console) instead "
        "of joining it: read-only, takes no Agent seat, also shows each call; needs the "
        "console's admin token in A2C_ADMIN_TOKEN or --admin-token-file",
    )  # fmt: skip
    watch.add_argument(
        "--admin-token-file", metavar="FILE",
        help="file holding the console's admin token (with --console)",
    )  # fmt: skip
    add_bridge_parser(commands, env)
    _output_flags_after_the_command(commands)
    return parser


def _output_flags_after_the_command(commands: Any) -> None:
    """``a2c-agent call … --json`` works as well as ``a2c-agent --json call …``."""
    for sub in commands.choices.values():
        group = sub.add_mutually_exclusive_group()
        # SUPPRESS: absent after the command, the value given before it stays.
        for flag in ("json", "table"):
            group.add_argument(
                f"--{flag}", dest="output", action="store_const", const=flag,
                default=argparse.SUPPRESS, help=f"print {flag.upper()} (also before the command)",
            )  # fmt: skip


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _url_problem(url: str) -> str | None:
    try:
        versioned_url(url)
    except ValueError as exc:
        if "://" not in url:
            return f"{exc}; did you mean http://{url}?"
        return str(exc)
    return None


def parse_args(
    argv: Sequence[str] | None, environ: Mapping[str, str]
) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """Parse and check the command line; exits with code 2 on a usage error."""
    parser = build_parser(environ)
    args = parser.parse_args(argv)
    for dest in ("server", "office"):
        if getattr(args, dest) is None:
            parser.error(f"--{dest} is needed (or set {ENV_VARS[dest]})")
    # One rule with a2c-server and a2c-computer: a variable set but blank is an error.
    for dest, var in ENV_VARS.items():
        value = getattr(args, dest)
        if value is not None and not value.strip():
            if environ.get(var) == value:
                parser.error(f"{var} is set but empty: unset it or give a value")
            parser.error(f"{_flag(dest)} must not be empty")
    if args.command == "mcp" and args.http_token is not None and not args.http_token.strip():
        parser.error(f"--http-token / {HTTP_TOKEN_ENV} is set but empty: unset it or give a value")
    token_problem = token_flags_problem(args.token, args.token_file)
    if token_problem is not None:
        # Not a syntax slip: the whole usage block would only bury the one line that matters.
        parser.exit(EXIT_USAGE, f"{parser.prog}: error: {token_problem}\n")
    problem = _url_problem(args.server)
    if problem is not None:
        parser.error(f"--server: {problem}")
    if args.name is None:
        args.name = _granted_name(args) or DEFAULT_NAME_PREFIX + secrets.token_hex(3)
    args.params_object = {}
    if args.command == "call" and args.params is not None:
        args.params_object = _params(parser, args.params)
    if args.command == "call":
        read_input_args(parser, args)
    problem = _destination_problem(args)
    if problem is not None:
        parser.error(problem)
    problem = put_problem(args) if args.command == "put" else None
    if problem is not None:  # the command is right, the file is not: no usage block
        parser.exit(EXIT_USAGE, f"{parser.prog}: error: {problem}\n")
    if args.command == "watch" and args.admin_token_file is not None and not args.console:
        parser.error("--admin-token-file goes with --console")
    if args.command == "desktop" and args.window is not None:
        try:
            WindowURI.parse(args.window)
        except InvalidWindowURIError as exc:
            parser.error(f"--window: {exc}")
    return parser, args


def _destination_problem(args: argparse.Namespace) -> str | None:
    """The one output-path rule, checked before connecting (so no work is lost)."""
    if args.command == "call":
        if args.save_dir is None:  # a fresh temp dir, made when an item needs it
            return None
        problem = dir_problem(args.save_dir)
        return None if problem is None else f"--save-dir: {problem}"
    path = {"blob": "output", "skill": "file"}.get(args.command)
    if path is None or getattr(args, path) is None:
        return None
    problem = file_problem(getattr(args, path), overwrite=args.overwrite)
    return None if problem is None else f"-o: {problem}"


def _params(parser: argparse.ArgumentParser, text: str) -> dict[str, Any]:
    try:
        params = json.loads(text)
    except ValueError as exc:
        parser.error(f"JSON must be a JSON object: {exc}")
    if not isinstance(params, dict):
        parser.error("JSON must be a JSON object")
    return params


def _granted_name(args: argparse.Namespace) -> str | None:
    token = args.token
    if token is None and args.token_file:
        try:
            token = Path(args.token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None  # said when the file is read to connect
    return granted_name(token) if token else None


def granted_name(token: str) -> str | None:
    """The name a JWT's grant (its ``a2c`` claim) fixes, or None.

    Read without checking the signature: it only picks a default the Server then judges.
    """
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except (binascii.Error, ValueError):
        return None
    grant = claims.get("a2c") if isinstance(claims, dict) else None
    name = grant.get("name") if isinstance(grant, dict) else None
    return name if isinstance(name, str) and name else None
