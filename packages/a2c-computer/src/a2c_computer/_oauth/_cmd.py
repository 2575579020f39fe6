"""``a2c-computer auth login | status | logout``: sign-ins of OAuth MCP servers.

::

    a2c-computer auth login SERVER --config computer.json [--scope S] [--no-browser]
    a2c-computer auth status --config computer.json
    a2c-computer auth logout SERVER   (revokes at the authorization server when it can)

Nothing printed here contains a token.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import webbrowser
from typing import Any

from a2c_computer._config import load_config
from a2c_computer._exceptions import ConfigError
from a2c_protocol import SseServerConfig, StreamableServerConfig

from ._store import TokenStore, default_store

# ``_login`` and ``_provider`` load the MCP client's OAuth code; only ``login`` and ``status``
# need it, so ``add_auth_parser`` (run by every ``a2c-computer`` command line) does not.

__all__ = ["add_auth_parser", "run_auth"]


def add_auth_parser(sub: Any) -> argparse.ArgumentParser:
    """The ``auth`` command and its three subcommands."""
    auth: argparse.ArgumentParser = sub.add_parser(
        "auth", help="sign in to MCP servers behind OAuth (login, status, logout)"
    )
    commands = auth.add_subparsers(dest="auth_command", metavar="{login,status,logout}")
    login = commands.add_parser(
        "login",
        help="sign in to SERVER (authorization code + PKCE, loopback redirect)",
        description="Prints the sign-in URL and opens a browser where one exists; the "
        "tokens are stored for SERVER and its URL (OS keyring, else a 0600 file under "
        "the state directory). A running Computer picks the sign-in up by itself.",
    )
    login.add_argument("server", metavar="SERVER")
    login.add_argument(
        "--scope", action="append", default=[], help="ask for this scope too (repeatable)"
    )
    login.add_argument("--no-browser", action="store_true", help="only print the URL")
    login.add_argument(
        "--timeout", type=float, default=300.0, help="seconds to wait for the browser step"
    )
    status = commands.add_parser("status", help="which OAuth servers are signed in")
    logout = commands.add_parser(
        "logout",
        help="revoke the sign-in of SERVER at its authorization server (RFC 7009, when it "
        "offers that) and forget it",
    )
    logout.add_argument("server", metavar="SERVER")
    for command in (login, status, logout):
        command.add_argument(
            "--config", help="config JSON file (env A2C_COMPUTER_CONFIG)", default=None
        )
    return auth


def _oauth_servers(path: str | None) -> dict[str, StreamableServerConfig | SseServerConfig]:
    if not path:
        return {}
    config = load_config(path)
    return {
        name: server
        for name, server in config.servers.items()
        if isinstance(server, StreamableServerConfig | SseServerConfig) and server.auth is not None
    }


async def _open(url: str, *, browser: bool) -> None:
    print(f"Open this URL to sign in:\n\n  {url}\n", flush=True)
    if browser:
        try:
            webbrowser.get()
        except webbrowser.Error:
            return
        await asyncio.to_thread(webbrowser.open, url)


def run_auth(args: argparse.Namespace, store: TokenStore | None = None) -> int:
    """Run ``auth …``; returns the exit status."""
    import os

    path = args.config or os.environ.get("A2C_COMPUTER_CONFIG")
    store = store if store is not None else default_store()
    command = args.auth_command
    if command == "login":
        servers = _oauth_servers(path)
        if not path:
            raise ConfigError("auth login needs --config (or A2C_COMPUTER_CONFIG)")
        config = servers.get(args.server)
        if config is None:
            names = ", ".join(sorted(servers)) or "none"
            raise ConfigError(
                f"MCP server {args.server!r} is not an OAuth server of {path} "
                f"(OAuth servers: {names})"
            )
        from ._login import sign_in

        tools = asyncio.run(
            sign_in(
                args.server,
                config,
                store,
                open_url=lambda url: _open(url, browser=not args.no_browser),
                extra_scopes=args.scope,
                timeout=args.timeout,
            )
        )
        print(f"Signed in to {args.server} ({tools} tools); tokens kept in {store.where}.")
        return 0
    if command == "logout":
        return _logout(args.server, store)
    return _status(_oauth_servers(path), store)


def _logout(server: str, store: TokenStore) -> int:
    """Revoke at the authorization server where it can (RFC 7009), then forget locally."""
    from ._revoke import revoke_sign_in

    records = list(store.entries().get(server, {}).values())
    outcomes = [revoke_sign_in(record) for record in records]
    gone = store.delete(server)
    if not gone:
        print(f"No stored sign-in for {server}.")
        return 0
    print(f"Signed out of {server}: the stored sign-in is deleted.")
    failed = False
    for outcome in outcomes:
        if outcome.endpoint is None:
            print(
                "  The authorization server offers no token revocation: the tokens stay valid "
                "until they expire, and a running Computer keeps using the ones it holds "
                "until it restarts."
            )
        elif outcome.problem is not None:
            failed = True
            print(
                f"  Revocation at {outcome.endpoint} failed ({outcome.problem}): the tokens "
                "stay valid until they expire; a running Computer keeps using them."
            )
        elif outcome.revoked:
            print(
                f"  Revoked at {outcome.endpoint}: {' and '.join(outcome.revoked)}; a running "
                "Computer's next call to this server needs a new sign-in (4006)."
            )
    return 1 if failed else 0


def _status(servers: dict[str, StreamableServerConfig | SseServerConfig], store: TokenStore) -> int:
    from ._provider import resource_of

    entries = store.entries()
    names = sorted(set(servers) | set(entries))
    if not names:
        print("No OAuth servers configured and no stored sign-ins.")
        return 0
    missing = False
    for name in names:
        config = servers.get(name)
        records = entries.get(name, {})
        resource = resource_of(config.server_parameters.url) if config is not None else None
        record = records.get(resource) if resource is not None else None
        if config is None:
            print(f"{name}: stored sign-in, no longer in the config (auth logout {name})")
        elif record is None or not isinstance(record.get("tokens"), dict):
            missing = True
            print(f"{name}: not signed in (a2c-computer auth login {name})")
        else:
            print(f"{name}: signed in — {_describe(record)}")
    sys.stdout.flush()
    return 1 if missing else 0


def _describe(record: dict[str, Any]) -> str:
    tokens = record["tokens"]
    parts = []
    ends = record.get("expires_at")
    if isinstance(ends, int | float):
        left = ends - time.time()
        parts.append(
            f"access token expires in {int(left)} s" if left > 0 else "access token expired"
        )
    parts.append("refresh token: " + ("yes" if tokens.get("refresh_token") else "no"))
    if tokens.get("scope"):
        parts.append(f"scopes: {tokens['scope']}")
    return ", ".join(parts)
