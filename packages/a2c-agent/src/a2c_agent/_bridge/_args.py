"""The ``mcp`` subcommand of ``a2c-agent``: its flags and their checks (no ``mcp`` import)."""

from __future__ import annotations

import argparse
from typing import Any, Final

from ._gate import is_loopback, normal_origin
from ._names import DEFAULT_SEPARATOR, separator_problem

__all__ = ["HTTP_TOKEN_ENV", "add_parser", "http_address", "is_loopback", "usage_problem"]

#: The variable ``--http-token`` falls back to.
HTTP_TOKEN_ENV: Final = "A2C_MCP_HTTP_TOKEN"

_HELP: Final = """\
Serve the office's tools over MCP, as its Agent: every MCP host (Claude Desktop, Claude
Code, Cursor, VS Code, the MCP Inspector...) configured with this command can list and call
the tools of every Computer in the office. stdio by default (what desktop hosts spawn);
--http HOST:PORT serves streamable HTTP at http://HOST:PORT/mcp instead. Needs the extra:
pip install 'a2c-agent[mcp]'. Logs go to stderr.
"""


def _separator(text: str) -> str:
    problem = separator_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def _origin(text: str) -> str:
    origin = normal_origin(text)
    if origin is None:
        raise argparse.ArgumentTypeError(
            f"expected an origin such as https://app.example.com:8443, got {text!r}"
        )
    return origin


def http_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) → (host, port)."""
    host, colon, port = text.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, e.g. 127.0.0.1:8765, got {text!r}")
    return host, int(port)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def add_parser(commands: Any, environ: Any) -> None:
    """Add ``mcp`` to the subcommands of ``a2c-agent``."""
    mcp = commands.add_parser(
        "mcp",
        help="serve the office's tools to MCP hosts (stdio, or --http), as its Agent",
        description=_HELP,
    )
    mcp.add_argument(
        "--computer", action="append", default=[], dest="computers", metavar="NAME",
        help="serve only this Computer's tools (repeatable; default: every Computer)",
    )  # fmt: skip
    mcp.add_argument(
        "--separator", type=_separator, default=DEFAULT_SEPARATOR,
        help="joins the Computer and the tool in a served name (default: %(default)s)",
    )  # fmt: skip
    mcp.add_argument(
        "--http", type=http_address, metavar="HOST:PORT",
        help="serve streamable HTTP at /mcp instead of stdio; without --http-token a random "
        "token is made and written to a file only you can read (stderr says where)",
    )  # fmt: skip
    mcp.add_argument(
        "--http-token", default=(environ or {}).get(HTTP_TOKEN_ENV),
        help=f"bearer token HTTP clients must send [env {HTTP_TOKEN_ENV}; prefer it: a flag "
        "is visible to other users in the process list]",
    )  # fmt: skip
    mcp.add_argument(
        "--no-token", action="store_true", dest="http_no_token",
        help="serve loopback HTTP without a bearer token: every local account can then use "
        "the office's tools (a WARNING says so)",
    )  # fmt: skip
    mcp.add_argument(
        "--http-origin", type=_origin, action="append", default=[], dest="http_origins",
        metavar="ORIGIN",
        help="a web origin (scheme://host[:port]) whose pages may use the bridge over HTTP "
        "(repeatable); requests with another Origin header are refused (403); on loopback "
        "loopback origins are allowed too",
    )  # fmt: skip
    mcp.add_argument(
        "--tool-timeout", type=_positive, default=300.0,
        help="seconds a tool call may take (default: %(default)s)",
    )  # fmt: skip
    mcp.add_argument(
        "--input-timeout", type=_positive, default=300.0,
        help="seconds a tool's question (a form, a URL, a sampling request) waits for the "
        "MCP host's answer; then the call is cancelled (default: %(default)s)",
    )  # fmt: skip
    mcp.add_argument(
        "--max-inline-bytes", type=int, default=16 * 1024 * 1024,
        help="most bytes of blob-borne result items pulled and inlined per call; items past "
        "it become a text item naming their blob handle (default: %(default)s)",
    )  # fmt: skip


def usage_problem(args: argparse.Namespace) -> str | None:
    """A mistake in the ``mcp`` flags that argparse cannot see alone."""
    if args.max_inline_bytes < 0:
        return "--max-inline-bytes must be >= 0"
    if args.http is None:
        return "--no-token is for --http only" if args.http_no_token else None
    host, _ = args.http
    if args.http_no_token and args.http_token:
        return f"--no-token and a token (--http-token or {HTTP_TOKEN_ENV}): choose one"
    if not is_loopback(host) and not args.http_token:
        return (
            f"--http {host}: serving on a non-loopback address needs a bearer token "
            f"(--http-token or {HTTP_TOKEN_ENV})"
        )
    return None
