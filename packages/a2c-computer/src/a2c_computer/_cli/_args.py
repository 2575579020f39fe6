"""The ``a2c-computer`` parser: its commands, flags and help.

A flag left unset is filled from its environment variable by :func:`._env.apply_env`,
where every value's check is too (the rules are there); the names of ``_env`` that the
command and its tests use are re-exported here.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from a2c_computer._landing import add_landed_parser, add_landing_flags
from a2c_computer._oauth._cmd import add_auth_parser
from a2c_computer._version import __version__
from a2c_protocol import PROTOCOL_VERSION

from ._env import (
    BLOB_OPTIONS,
    ENV_OPTIONS,
    SKILL_OPTIONS,
    EnvOption,
    apply_env,
    blob_settings,
    checked,
    confirm_mode,
    port,
    positive_int,
    positive_seconds,
    protocol_line,
    seconds,
    server_url,
    skill_settings,
)

__all__ = [
    "BLOB_OPTIONS",
    "ENV_OPTIONS",
    "SKILL_OPTIONS",
    "EnvOption",
    "add_skill_flags",
    "apply_env",
    "blob_settings",
    "build_parser",
    "parse_command_line",
    "server_url",
    "skill_settings",
]


def add_skill_flags(parser: argparse.ArgumentParser) -> None:
    """``--skills-dir``, ``--skills-install-dir``, ``--no-user-skills``."""
    parser.add_argument(
        "--skills-dir",
        help="the user's skill folder, one package (a directory with SKILL.md) per skill "
        "(default: a2c-computer/skills/user under the user's data directory; "
        "env A2C_SKILLS_DIR)",
    )
    parser.add_argument(
        "--skills-install-dir",
        help="private directory (created 0700) the skills of MCP servers are staged into "
        "(default: a2c-computer/skills/staged/NAME under the user's data directory; "
        "env A2C_SKILLS_INSTALL_DIR)",
    )
    parser.add_argument(
        "--no-user-skills",
        action="store_const",
        const=True,
        help="offer no skills from a user folder, only those of MCP servers "
        "(env A2C_NO_USER_SKILLS=1)",
    )


_ENV_HELP = """\
environment (a flag wins over its variable; a variable set but empty is an error):
  A2C_COMPUTER_CONFIG  --config         A2C_SERVER_URL      --server
  A2C_OFFICE           --office (also A2C_OFFICE_ID)
  A2C_COMPUTER_NAME    --name           A2C_TOKEN           --token
  A2C_TOKEN_FILE       --token-file     A2C_ALLOW_AGENTS    --allow-agent
  A2C_SOCKETIO_PATH    --socketio-path  A2C_WAIT_SERVER     --wait-server
  A2C_CONFIRM          --confirm        A2C_METRICS_PORT    --metrics-port
  A2C_METRICS_HOST     --metrics-host   A2C_SHUTDOWN_GRACE  --shutdown-grace
  A2C_WATCH_CONFIG     --watch-config   A2C_LOG_FORMAT      --log-format
  A2C_COMPUTER_MAX_MESSAGE_BYTES --max-message-bytes
  A2C_BLOB_INLINE_BUDGET --blob-inline-budget  A2C_BLOB_CHUNK_BYTES --blob-chunk-bytes
  A2C_BLOB_MAX_BYTES   --blob-max-bytes A2C_BLOB_SPOOL_DIR  --blob-spool-dir
  A2C_BLOB_SPOOL_MAX_BYTES --blob-spool-max-bytes  A2C_BLOB_TTL --blob-ttl
  A2C_SKILLS_DIR       --skills-dir     A2C_SKILLS_INSTALL_DIR --skills-install-dir
  A2C_NO_USER_SKILLS   --no-user-skills  A2C_LANDING_DIR  --landing-dir
  A2C_PROTOCOL         --protocol       A2C_INPUT_TIMEOUT   --input-timeout
  A2C_MAX_INPUT_REQUESTS_PER_ROUND / _PER_CALL  --max-input-requests-per-round / -per-call
  A2C_LANDING_*        --landing-* (every one: A2C_LANDING_MAX_FILES is --landing-max-files)

exit status: 0 stopped, 1 refused by or cannot reach the Server (run) / problems found
(check), 2 usage error (bad flag, environment value or configuration), 3 protocol version
refused (4008), 130 interrupted."""


def build_parser() -> argparse.ArgumentParser:
    """The ``a2c-computer`` parser; ``run`` options left unset are filled by :func:`apply_env`."""
    parser = argparse.ArgumentParser(
        prog="a2c-computer",
        description="A2C-SMCP 0.2 Computer",
        epilog=_ENV_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"a2c-computer {__version__} (A2C-SMCP protocol {PROTOCOL_VERSION})",
    )
    _add_logging_flags(parser, os.environ.get("A2C_LOG_FORMAT", "text"))
    # Not required=True: argparse would then report a missing command before an unknown
    # option (`a2c-computer --bogus`); parse_command_line checks both, in that order.
    sub = parser.add_subparsers(dest="command", metavar="{run,check,skills,config,auth,landed}")
    run = sub.add_parser(
        "run",
        help="serve the configured MCP servers to an office",
        epilog=_ENV_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--config", help="config JSON file (env A2C_COMPUTER_CONFIG)")
    run.add_argument("--server", type=checked(server_url, "URL"),
                     help="Server URL, http://host:port (env A2C_SERVER_URL)")  # fmt: skip
    run.add_argument("--office", help="office id to join (env A2C_OFFICE or A2C_OFFICE_ID)")
    run.add_argument("--name", help="this Computer's name (env A2C_COMPUTER_NAME)")
    run.add_argument("--token", help="sent as auth.token (env A2C_TOKEN; prefer it to the flag)")
    run.add_argument(
        "--allow-agent", action="append", metavar="NAME",
        help="answer only this Agent (repeatable; env A2C_ALLOW_AGENTS, comma-separated); "
        "others get 403 whatever the Server does. Without it any Agent in the office may "
        "call this Computer's tools",
    )  # fmt: skip
    run.add_argument(
        "--token-file",
        help="file holding the token, read again at every (re)connect, for short-lived tokens "
        "renewed by another process (env A2C_TOKEN_FILE)",
    )
    run.add_argument("--socketio-path", help="default socket.io (env A2C_SOCKETIO_PATH)")
    run.add_argument(
        "--wait-server", type=checked(seconds, "seconds"),
        help="seconds to keep retrying while the Server is not reachable yet (default 30; "
        "env A2C_WAIT_SERVER). A refusal (a bad token) is never retried",
    )  # fmt: skip
    run.add_argument(
        "--confirm",
        type=checked(confirm_mode, "mode"),
        help="tools without auto_apply: ask on the terminal (refused with 4005 when there "
        "is no foreground terminal: systemd, nohup, docker), allow, or deny (4005); "
        "default ask (env A2C_CONFIRM)",
    )
    run.add_argument(
        "--metrics-port",
        type=checked(port, "port"),
        help="serve Prometheus metrics on this port at /metrics (0 picks a free one, logged; "
        "default: off; env A2C_METRICS_PORT)",
    )
    run.add_argument(
        "--metrics-host", help="address the metrics endpoint binds (default 127.0.0.1)"
    )
    run.add_argument(
        "--shutdown-grace",
        type=checked(seconds, "seconds"),
        help="on SIGTERM/SIGINT, seconds tool calls in flight may still finish before they "
        "are cancelled (default 10; a second signal stops at once; env A2C_SHUTDOWN_GRACE)",
    )
    run.add_argument(
        "--watch-config", action="store_const", const=True,
        help="reload the config file when it changes; SIGHUP always reloads it "
        "(env A2C_WATCH_CONFIG=1)",
    )  # fmt: skip
    run.add_argument(
        "--input-timeout", type=checked(positive_seconds, "seconds"),
        help="seconds an MCP server's question to the Agent (a form, a URL, a sampling) "
        "waits for its answer before the tool call is cancelled (default 300; env "
        "A2C_INPUT_TIMEOUT)",
    )  # fmt: skip
    run.add_argument(
        "--max-input-requests-per-round",
        type=checked(positive_int, "a positive integer"),
        help="most input requests an MCP server may ask in one round of a tool call; past "
        "it they are refused and the call ends naming the bound (default 16; env "
        "A2C_MAX_INPUT_REQUESTS_PER_ROUND)",
    )
    run.add_argument(
        "--max-input-requests-per-call", type=checked(positive_int, "a positive integer"),
        help="most input requests an MCP server may ask in one tool call, all rounds "
        "together (default 64; env A2C_MAX_INPUT_REQUESTS_PER_CALL)",
    )  # fmt: skip
    for flag, field, env, convert, text in BLOB_OPTIONS:
        run.add_argument(
            flag,
            dest=f"blob_{field}",
            metavar=field.upper(),
            type=checked(convert, field),
            help=f"{text} (env {env})",
        )
    add_skill_flags(run)
    add_landing_flags(run)
    run.add_argument(
        "--protocol", type=checked(protocol_line, "line"),
        help="speak only this protocol line, 0.2 or 0.4 (default: 0.2, then 0.4 when the "
        "Server refuses 0.2 and accepts 0.4; env A2C_PROTOCOL)",
    )  # fmt: skip
    check = sub.add_parser(
        "check", help="start the MCP servers locally and lint their windows and skills"
    )
    skills = sub.add_parser(
        "skills",
        help="start the MCP servers locally and list the skills an Agent would be offered "
        "(and every refused package with why)",
    )
    for local in (check, skills):
        local.add_argument("--config", required=True, help="config JSON file")
        local.add_argument(
            "--timeout",
            type=checked(positive_seconds, "seconds"),
            default=30.0,
            help="start timeout per server in seconds, more than 0 (default 30)",
        )
    add_skill_flags(skills)
    add_landing_flags(check)
    config = sub.add_parser("config", help="work on a config file (see 'config convert')")
    config_sub = config.add_subparsers(dest="config_command", metavar="{convert}")
    converter = config_sub.add_parser(
        "convert",
        help="write an mcpServers file (Claude-desktop style) in this Computer's format",
        description="Convert an mcpServers file (the shape other MCP hosts use) to this "
        "Computer's format, where tool_prefix, default_tool_meta and the other keys of "
        "computer.md can be set. The converted servers keep their names; no tool_meta is "
        "invented. Writes to stdout, or to -o OUT (a new file; --overwrite replaces one).",
    )
    converter.add_argument("file", metavar="FILE", help="the mcpServers JSON file")
    converter.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    converter.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    auth = add_auth_parser(sub)
    for command in (run, check, skills, config, converter, auth, add_landed_parser(sub)):
        # Accepted after the command too (`run -v`); unset there, the top level's value stays.
        _add_logging_flags(command, argparse.SUPPRESS)
    return parser


def _add_logging_flags(parser: argparse.ArgumentParser, log_format: str) -> None:
    verbose_default: Any = argparse.SUPPRESS if log_format == argparse.SUPPRESS else 0
    parser.add_argument(
        "-v", "--verbose", action="count", default=verbose_default, help="more logging"
    )
    parser.add_argument(
        "--log-format",
        choices=["text", "json"],
        default=log_format,
        help="log lines as text or one JSON object per line (env A2C_LOG_FORMAT)",
    )


def parse_command_line(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace:
    """Parse ``argv``: an unknown option is named first, then a missing command."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command is None:
        parser.error("a command is needed: run, check, skills, config, auth, landed (see --help)")
    if args.command == "auth" and getattr(args, "auth_command", None) is None:
        parser.error(
            "auth needs a command: login, status or logout (see 'a2c-computer auth --help')"
        )
    if args.command == "config" and getattr(args, "config_command", None) is None:
        parser.error("config needs a command: convert (see 'a2c-computer config --help')")
    return args
