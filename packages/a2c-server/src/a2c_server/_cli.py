"""The ``a2c-server`` command: run the Server under uvicorn.

Every option has a flag and an environment variable (the flag wins)::

    a2c-server --host 127.0.0.1 --port 8000
    A2C_SERVER_AUTH_TOKEN=... a2c-server --host 0.0.0.0
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import uvicorn

from ._app import create_app
from ._auth import is_loopback_host, require_jwt_support
from ._edge._shutdown import DrainingServer
from ._exceptions import SettingsError, StoreUnavailableError
from ._floods._heap import freeze_startup_heap
from ._observe import _otel as otel
from ._observe._logs import announce, configure_logging, uvicorn_log_level
from ._runtime import runtime_stack
from ._settings import ServerSettings
from ._version import __version__

__all__ = ["ENV_VARS", "main", "settings_from_args"]

_TRUE: Final = ("1", "true", "yes", "on")


def _audit_calls_env(text: str) -> str | None:
    word = text.strip().lower()
    if word in _TRUE:
        return "-"
    return None if word in ("0", "false", "no", "off") else text.strip()


# flag dest → (environment variable, parser of the variable's text)
ENV_VARS: Final[Mapping[str, tuple[str, Callable[[str], Any]]]] = {
    "host": ("A2C_SERVER_HOST", str),
    "port": ("A2C_SERVER_PORT", int),
    "socketio_path": ("A2C_SERVER_PATH", str),
    "protocol_version": ("A2C_SERVER_PROTOCOL_VERSION", str),
    "protocols": ("A2C_SERVER_PROTOCOLS", str),
    "auth_token": ("A2C_SERVER_AUTH_TOKEN", str),
    "max_message_bytes": ("A2C_SERVER_MAX_MESSAGE_BYTES", int),
    "max_tool_timeout": ("A2C_SERVER_MAX_TOOL_TIMEOUT", int),
    "tool_call_buffer": ("A2C_SERVER_TOOL_CALL_BUFFER", float),
    "forward_timeout": ("A2C_SERVER_FORWARD_TIMEOUT", float),
    "ping_interval": ("A2C_SERVER_PING_INTERVAL", float),
    "ping_timeout": ("A2C_SERVER_PING_TIMEOUT", float),
    "cors_allowed_origins": (
        "A2C_SERVER_CORS_ORIGINS",
        lambda text: tuple(o.strip() for o in text.split(",") if o.strip()),
    ),
    "allowed_hosts": (
        "A2C_SERVER_ALLOWED_HOSTS",
        lambda text: tuple(o.strip() for o in text.split(",") if o.strip()),
    ),
    "log_level": ("A2C_SERVER_LOG_LEVEL", str),
    "log_format": ("A2C_SERVER_LOG_FORMAT", str),
    "log_protocol": ("A2C_SERVER_LOG_PROTOCOL", lambda text: text.strip().lower() in _TRUE),
    "shutdown_grace": ("A2C_SERVER_SHUTDOWN_GRACE", float),
    "redis_url": ("A2C_SERVER_REDIS_URL", str),
    "redis_prefix": ("A2C_SERVER_REDIS_PREFIX", str),
    "node_id": ("A2C_SERVER_NODE_ID", str),
    "node_ttl": ("A2C_SERVER_NODE_TTL", float),
    "registry_timeout": ("A2C_SERVER_REGISTRY_TIMEOUT", float),
    "max_id_length": ("A2C_SERVER_MAX_ID_LENGTH", int),
    "max_outgoing_bytes": ("A2C_SERVER_MAX_OUTGOING_BYTES", int),
    "max_queued_output_bytes": ("A2C_SERVER_MAX_QUEUED_OUTPUT_BYTES", int),
    "admission_timeout": ("A2C_SERVER_ADMISSION_TIMEOUT", float),
    "join_timeout": ("A2C_SERVER_JOIN_TIMEOUT", float),
    "max_unadmitted_per_address": ("A2C_SERVER_MAX_UNADMITTED_PER_ADDRESS", int),
    "forwarded_allow_ips": ("A2C_SERVER_FORWARDED_ALLOW_IPS", str),
    "max_inbound_per_second": ("A2C_SERVER_MAX_INBOUND_PER_SECOND", float),
    "inbound_burst": ("A2C_SERVER_INBOUND_BURST", int),
    "notice_interval": ("A2C_SERVER_NOTICE_INTERVAL", float),
    "handshake_pace": ("A2C_SERVER_HANDSHAKE_PACE", float),
    "jwt_jwks_url": ("A2C_SERVER_JWT_JWKS_URL", str),
    "jwt_public_key": ("A2C_SERVER_JWT_PUBLIC_KEY", str),
    "jwt_secret": ("A2C_SERVER_JWT_SECRET", str),
    "jwt_issuer": ("A2C_SERVER_JWT_ISSUER", str),
    "jwt_audience": ("A2C_SERVER_JWT_AUDIENCE", str),
    "max_requests_per_second": ("A2C_SERVER_MAX_REQUESTS_PER_SECOND", float),
    "request_burst": ("A2C_SERVER_REQUEST_BURST", int),
    "max_connections_per_subject": ("A2C_SERVER_MAX_CONNECTIONS_PER_SUBJECT", int),
    "allow_offices": (
        "A2C_SERVER_ALLOW_OFFICES",
        lambda text: tuple(o.strip() for o in text.split(",") if o.strip()),
    ),
    "audit_calls": ("A2C_SERVER_AUDIT_CALLS", _audit_calls_env),
    "console": ("A2C_SERVER_CONSOLE", lambda text: text.strip().lower() in _TRUE),
    "admin_token": ("A2C_SERVER_ADMIN_TOKEN", str),
}

# Settings read from the environment only: a password on a command line is visible to
# every local user.
ENV_ONLY: Final[Mapping[str, str]] = {
    "redis_password": "A2C_SERVER_REDIS_PASSWORD",
    "redis_sentinel_password": "A2C_SERVER_REDIS_SENTINEL_PASSWORD",
}


def _parser() -> argparse.ArgumentParser:
    defaults = ServerSettings()
    p = argparse.ArgumentParser(
        prog="a2c-server",
        description="A2C-SMCP signaling Server, protocol 0.2 and 0.4 (Socket.IO namespace /smcp).",
        epilog="Every option can also be set with the environment variable shown; "
        "a flag wins over its variable. A variable that is set but empty is an error.\n\n"
        "exit codes:\n"
        "  0 stopped by a signal (SIGTERM/Ctrl-C) after draining\n"
        "  2 bad usage or settings (flag or environment variable), or --redis given and\n"
        "    Redis unreachable at start; the reason is printed\n"
        "  3 cannot listen (address in use, unknown host); the reason is logged",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"a2c-server {__version__}")

    def opt(flag: str, dest: str, kind: Callable[[str], Any], help_text: str) -> None:
        env = ENV_VARS[dest][0]
        default = getattr(defaults, dest)
        secret = dest in ("auth_token", "admin_token", "redis_url", "jwt_secret")
        shown = "unset" if secret or default is None else default
        # An empty default (no CORS origins) is explained by the help text itself.
        default_text = "" if shown in ((), "") else f"; default {shown}"
        p.add_argument(
            flag, dest=dest, type=kind, default=None,
            help=f"{help_text} [env {env}{default_text}]",
        )  # fmt: skip

    opt("--host", "host", str, "address to bind")
    opt("--port", "port", int, "TCP port (0 picks a free one)")
    opt("--path", "socketio_path", str, "Engine.IO mount path")
    opt("--protocol-version", "protocol_version", str,
        "A2C protocol version this Server declares (leave the default)")  # fmt: skip
    opt("--protocols", "protocols", str,
        "protocol lines served, comma-separated (0.2, 0.4); a 0.2 and a 0.4 peer in one "
        "office are translated (docs/compatibility.md)")  # fmt: skip
    opt("--auth-token", "auth_token", str,
        "shared token clients must send as auth.token (prefer the env var: flags are "
        "visible to other local users); without it every client is accepted")  # fmt: skip
    opt("--jwt-jwks-url", "jwt_jwks_url", str,
        "verify clients' auth.token as a JWT with the keys at this JWKS URL (an OIDC "
        "issuer's jwks_uri; needs a2c-server[jwt])")  # fmt: skip
    opt("--jwt-public-key", "jwt_public_key", str,
        "verify JWTs with the PEM public key in this FILE instead of a JWKS URL")  # fmt: skip
    opt("--jwt-secret", "jwt_secret", str,
        "verify HS256 JWTs with this shared secret (>= 32 bytes; prefer the env var)")  # fmt: skip
    opt("--jwt-issuer", "jwt_issuer", str, "required JWT iss (with any --jwt-* key source)")
    opt("--jwt-audience", "jwt_audience", str, "required JWT aud (with any --jwt-* key source)")
    p.add_argument(
        "--allow-offices", dest="allow_offices", action="append", default=None,
        metavar="PATTERN", type=str,
        help="offices shared-token/allow-all clients may join: an id or a prefix ending in * "
        "(repeatable) [env A2C_SERVER_ALLOW_OFFICES, comma-separated; default any]",
    )  # fmt: skip
    opt("--max-requests-per-second", "max_requests_per_second", float,
        "requests one session may send per second (token bucket; over it: 429)")  # fmt: skip
    opt("--request-burst", "request_burst", int,
        "requests a session may send at once before --max-requests-per-second applies")  # fmt: skip
    opt("--max-connections-per-subject", "max_connections_per_subject", int,
        "sessions one identity (token subject) may hold, on all --redis nodes together "
        "(over it: 429)")  # fmt: skip
    opt("--max-message-bytes", "max_message_bytes", int, "largest accepted message")
    opt("--max-tool-timeout", "max_tool_timeout", int, "largest client:tool_call timeout (s)")
    opt("--tool-call-buffer", "tool_call_buffer", float,
        "seconds added to a tool call's timeout while waiting for the Computer")  # fmt: skip
    opt("--forward-timeout", "forward_timeout", float,
        "seconds to wait for a Computer's answer to the other client:* events")  # fmt: skip
    opt("--max-id-length", "max_id_length", int,
        "longest req_id, name or office id accepted (characters)")  # fmt: skip
    opt("--max-outgoing-bytes", "max_outgoing_bytes", int,
        "bytes waiting to be sent to one client before it is dropped")  # fmt: skip
    opt("--max-queued-output-bytes", "max_queued_output_bytes", int,
        "bytes waiting to be sent to all clients together; past it, clients holding "
        "over 1 MB are dropped")  # fmt: skip
    opt("--admission-timeout", "admission_timeout", float,
        "seconds a new connection has to be admitted to /smcp before it is closed")  # fmt: skip
    opt("--join-timeout", "join_timeout", float,
        "seconds a session in no office (from its connect, or its leave) has to join "
        "one before it is disconnected (0: no deadline)")  # fmt: skip
    opt("--max-unadmitted-per-address", "max_unadmitted_per_address", int,
        "connections one address may hold that are not admitted yet (a new one closes "
        "the oldest)")  # fmt: skip
    opt("--max-inbound-per-second", "max_inbound_per_second", float,
        "packets (events and acks) one session may send per second; past it they are "
        "dropped undecoded, and 5 s of it disconnects")  # fmt: skip
    opt("--inbound-burst", "inbound_burst", int,
        "packets a session may send at once before --max-inbound-per-second applies")  # fmt: skip
    opt("--handshake-pace", "handshake_pace", float,
        "while connects are refused in numbers (over 20/s), new handshakes start at most "
        "this many per second, in turn per client address; the rest wait (0: off)")  # fmt: skip
    opt("--notice-interval", "notice_interval", float,
        "seconds: a sender's server:update_* notices reach its office at most once per "
        "interval per kind, the last held one winning (0 relays every one)")  # fmt: skip
    opt("--forwarded-allow-ips", "forwarded_allow_ips", str,
        "reverse proxies whose X-Forwarded-For names the client address (comma list of "
        "addresses or networks, or *); per-address limits and logs use that address "
        "(default: none, every client is its TCP peer)")  # fmt: skip
    opt("--ping-interval", "ping_interval", float, "Engine.IO ping interval (s)")
    opt("--ping-timeout", "ping_timeout", float, "Engine.IO ping timeout (s)")
    opt("--cors-origins", "cors_allowed_origins", ENV_VARS["cors_allowed_origins"][1],
        "comma-separated browser origins allowed (default: same origin only)")  # fmt: skip
    opt("--allowed-hosts", "allowed_hosts", ENV_VARS["allowed_hosts"][1],
        "comma-separated extra Host names a tokenless loopback Server answers "
        "(a reverse proxy's); others get 421 (DNS rebinding)")  # fmt: skip
    opt("--log-level", "log_level", str, "DEBUG, INFO, WARNING or ERROR")
    opt("--log-format", "log_format", str, "text or json (one JSON object per line)")
    p.add_argument(
        "--log-protocol", dest="log_protocol", action="store_const", const=True, default=None,
        help="let uvicorn trace HTTP and websocket frames (secrets still redacted) "
        "[env A2C_SERVER_LOG_PROTOCOL; default off]",
    )  # fmt: skip
    opt("--shutdown-grace", "shutdown_grace", float,
        "seconds routed calls in flight may still finish after SIGTERM/SIGINT")  # fmt: skip
    opt("--redis", "redis_url", str,
        "redis://HOST:PORT/DB, or redis+sentinel://HOST:PORT,HOST:PORT/DB/SERVICE for a "
        "primary behind Redis Sentinel: run as one of several nodes sharing this Redis "
        "(needs a2c-server[redis]); without it the registry is in memory; passwords "
        "the URL does not carry: env A2C_SERVER_REDIS_PASSWORD (the primary's) and "
        "A2C_SERVER_REDIS_SENTINEL_PASSWORD")  # fmt: skip
    opt("--redis-prefix", "redis_prefix", str,
        "prefix of every Redis key and channel (one per deployment)")  # fmt: skip
    opt("--node-id", "node_id", str,
        "this node's name among the nodes (default HOSTNAME:PORT)")  # fmt: skip
    opt("--node-ttl", "node_ttl", float,
        "seconds without a heartbeat after which a node counts as dead")  # fmt: skip
    opt("--registry-timeout", "registry_timeout", float,
        "seconds one Redis registry command may take before a call is answered 503")  # fmt: skip
    p.add_argument(
        "--audit-calls", dest="audit_calls", nargs="?", const="-", default=None,
        metavar="FILE",
        help="also audit every forwarded client:tool_call (one record each, logger "
        "a2c_server.audit.calls): to the log without FILE, else appended to FILE "
        "[env A2C_SERVER_AUDIT_CALLS: 1/true, 0/false or a path; default off]",
    )  # fmt: skip
    p.add_argument(
        "--console", dest="console", action="store_const", const=True, default=None,
        help="serve the read-only office console at /console (needs --admin-token unless "
        "the host is loopback) [env A2C_SERVER_CONSOLE; default off]",
    )  # fmt: skip
    opt("--admin-token", "admin_token", str,
        "token that opens the console, at least 24 characters (prefer the env var: flags "
        "are visible to other local users)")  # fmt: skip
    return p


def settings_from_args(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> ServerSettings:
    """Settings from flags, then environment variables, then defaults."""
    args = _parser().parse_args(argv)
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for dest, (var, parse) in ENV_VARS.items():
        flag = getattr(args, dest)
        if flag is not None:
            values[dest] = flag
        elif var in env:
            if not env[var].strip():
                # An empty A2C_SERVER_AUTH_TOKEN= would otherwise start an allow-all Server.
                raise SettingsError(f"{var} is set but empty: unset it or give a value")
            try:
                values[dest] = parse(env[var])
            except ValueError as exc:
                raise SettingsError(f"{var}: {exc}") from exc
    for dest, var in ENV_ONLY.items():
        if env.get(var):
            values[dest] = env[var]
    return ServerSettings(**values)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``a2c-server``."""
    try:
        settings = settings_from_args(argv)
    except SettingsError as exc:
        print(f"a2c-server: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    configure_logging(settings)
    otel.configure_from_env(node=settings.node_id)
    if settings.redis_url is not None:
        _require_redis(settings.redis_url, settings)
    if settings.jwt_enabled:
        _require_jwt()
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,  # configure_logging owns the handlers (and their redaction)
        log_level=uvicorn_log_level(settings),
        lifespan="on",
        ws_max_size=settings.max_message_bytes + 1024,  # room for Engine.IO framing
        # X-Forwarded-For only from the proxies the operator names: uvicorn's own default
        # trusts 127.0.0.1, so any local or tunnelled client could pick its address.
        proxy_headers=bool(settings.forwarded_allow_ips),
        forwarded_allow_ips=settings.forwarded_allow_ips or None,
        # After the drain, a long-poll still open must not hold the exit up.
        timeout_graceful_shutdown=2,
    )
    config.load()  # uvicorn's protocol modules, before the start-up heap is frozen
    freeze_startup_heap()
    server = DrainingServer(
        config, drain=app.drain, grace=settings.shutdown_grace, after_drain=app.end_requests
    )
    # Bind before announcing, so that --port 0 shows the port actually picked. A failed
    # bind (port in use) is logged by uvicorn and exits 3 without a traceback.
    sock = config.bind_socket()
    # Listen now: a client that reads the banner and connects at once is queued until the
    # app starts, instead of being refused.
    sock.listen(config.backlog)
    announce(settings, banner(settings, int(sock.getsockname()[1])))
    try:
        server.run(sockets=[sock])
    finally:
        otel.shutdown()


def banner(settings: ServerSettings, port: int) -> str:
    """The start-up line: version, the URL clients use, and who is let in."""
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    if settings.jwt_enabled:
        auth = "jwt"
    elif settings.auth_token:
        auth = "token"
    elif is_loopback_host(settings.host):
        auth = "allow-all"
    else:
        auth = "allow-all: ANYONE who can reach this address may connect"
    console = ""
    if settings.console:
        guard = "admin token" if settings.admin_token else "no token: loopback only"
        console = f"; console http://{host}:{port}/console ({guard})"
    return (
        f"a2c-server {__version__}: protocol {' and '.join(settings.served_versions)} on "
        f"http://{host}:{port}/{settings.socketio_path}/ (namespace /smcp, auth {auth}) "
        f"on {runtime_stack().describe()}{console}"
    )


def _require_jwt() -> None:
    """Exit 2 with a clear message unless the jwt extra is installed."""
    try:
        require_jwt_support()
    except SettingsError as exc:
        print(f"a2c-server: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc


def _require_redis(url: str, settings: ServerSettings) -> None:
    """Exit 2 with a clear message unless the extra is installed and Redis answers."""
    try:
        from ._cluster._multinode import check_redis
    except ImportError as exc:
        print(
            f"a2c-server: --redis needs the redis package: install a2c-server[redis] ({exc})",
            file=sys.stderr,
        )
        raise SystemExit(2) from exc
    try:
        asyncio.run(check_redis(url, settings))
    except StoreUnavailableError as exc:
        print(f"a2c-server: {exc} (is Redis running at the --redis URL?)", file=sys.stderr)
        raise SystemExit(2) from exc
