"""Server settings: one frozen, validated value shared by the app factory and the CLI."""

from __future__ import annotations

from typing import Any

import attrs

from a2c_protocol import PROTOCOL_VERSION, InvalidVersionError, ProtocolVersion
from a2c_protocol._lines import KNOWN_LINES, LINE_VERSIONS, Line, line_of, parse_lines

from ._auth import is_loopback_host
from ._exceptions import SettingsError
from ._state._limits import DEFAULT_MAX_ID_LENGTH

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "HARD_MAX_TOOL_TIMEOUT", "ServerSettings"]

#: Default cap on one Engine.IO message (rooms-and-security.md §9 suggests 1 MB).
DEFAULT_MAX_MESSAGE_BYTES = 1_000_000
#: No deployment may accept tool-call timeouts above this (errors.md §6 recommendation).
HARD_MAX_TOOL_TIMEOUT = 3600
#: The shortest admin token accepted (the console has no second factor).
MIN_ADMIN_TOKEN = 24


def _positive(instance: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value > 0:
        raise SettingsError(f"{attribute.name} must be > 0, got {value!r}")


def _non_negative(instance: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value >= 0:
        raise SettingsError(f"{attribute.name} must be >= 0, got {value!r}")


def _positive_or_none(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None:
        _positive(instance, attribute, value)


def _port(instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if isinstance(value, bool) or not 0 <= value <= 65535:
        raise SettingsError(f"port must be in 0..65535, got {value!r}")


def _max_timeout(instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if isinstance(value, bool) or not 1 <= value <= HARD_MAX_TOOL_TIMEOUT:
        raise SettingsError(
            f"max_tool_timeout must be in 1..{HARD_MAX_TOOL_TIMEOUT} seconds, got {value!r}"
        )


def _version(instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    try:
        ProtocolVersion.parse(value)
    except InvalidVersionError as exc:
        raise SettingsError(f"protocol_version: {exc}") from exc


def _protocols(value: str | tuple[str, ...] | list[str]) -> tuple[Line, ...]:
    try:
        return parse_lines(value if isinstance(value, str) else ",".join(value))
    except ValueError as exc:
        raise SettingsError(f"protocols: {exc}") from exc


def _path(value: str) -> str:
    path = value.strip().strip("/")
    if not path or any(c in path for c in "?#"):
        raise SettingsError(f"socketio_path must be a non-empty URL path, got {value!r}")
    return path


def _redis_url(value: str | None) -> str | None:
    if value is None:
        return None
    url = value.strip()
    if url.startswith("redis+sentinel://"):
        from ._cluster._redis_url import parse_redis_target

        try:
            parse_redis_target(url)
        except ValueError as exc:  # the message never echoes the URL (it may hold a password)
            raise SettingsError(f"redis_url: {exc}") from None
        return url
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise SettingsError(
            "redis_url must look like redis://HOST:PORT/DB (or rediss://, unix://, "
            f"redis+sentinel://HOST:PORT,HOST:PORT/DB/SERVICE), got {value!r}"
        )
    return url


def _key_part(label: str, value: str) -> str:
    text = value.strip()
    # Braces would break the Redis Cluster hash tag the keys are wrapped in.
    if not text or len(text) > 64 or any(c.isspace() or c in "{}" for c in text):
        raise SettingsError(
            f"{label} must be 1..64 characters without spaces or braces, got {value!r}"
        )
    return text


def _redis_prefix(value: str) -> str:
    return _key_part("redis_prefix", value)


def _node_id(value: str | None) -> str | None:
    return None if value is None else _key_part("node_id", value)


def _patterns(value: Any) -> tuple[str, ...]:
    from ._auth import GrantError, check_office_pattern

    try:
        return tuple(check_office_pattern(p) for p in value)
    except GrantError as exc:
        raise SettingsError(f"allow_offices: {exc}") from exc


def _log_level(value: str) -> str:
    level = value.strip().upper()
    if level not in ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG"):
        raise SettingsError(f"log_level must be one of DEBUG/INFO/WARNING/ERROR, got {value!r}")
    return level


def _audit_calls(value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip()
    if not text:
        raise SettingsError("audit_calls must be - (the log stream) or a file path")
    return text


def _log_format(value: str) -> str:
    fmt = value.strip().lower()
    if fmt not in ("text", "json"):
        raise SettingsError(f"log_format must be text or json, got {value!r}")
    return fmt


@attrs.frozen(kw_only=True)
class ServerSettings:
    """Everything a deployment can tune. All fields have safe defaults.

    ``socketio_path`` is the Engine.IO mount path without slashes (``"socket.io"`` serves
    ``/socket.io/``); the version gate guards exactly that path. ``protocols`` are the
    protocol lines served (``("0.2", "0.4")`` by default; a mixed office is translated).
    ``auth_token`` switches
    the default authentication from allow-all to the shared-token provider; it is never
    shown by ``repr``. ``tool_call_buffer`` is added to a ``client:tool_call``'s own
    ``timeout`` when the Server waits for the Computer; ``forward_timeout`` is the wait for
    the other ``client:*`` events. ``log_format`` is ``text`` or ``json`` (one object per
    line); ``log_protocol`` lets uvicorn trace HTTP/websocket frames (off by default, even
    at DEBUG: frames carry what clients send).
    ``max_id_length`` bounds identifier strings (``req_id``, names, office ids…);
    ``max_outgoing_bytes`` is how much may wait to be sent to one client before it is
    dropped, ``max_queued_output_bytes`` how much for all clients of the process together
    (past it, clients holding over 1 MB are dropped); an Engine.IO session must be
    admitted to ``/smcp`` within ``admission_timeout`` seconds, and one address may hold
    ``max_unadmitted_per_address`` sessions not admitted yet (a new one closes the oldest;
    see "Security model" in docs/server.md). A session in no office (from its connect,
    with or without ``auth.role``, or from its ``server:leave_office``) must join one
    within ``join_timeout`` seconds or is disconnected (0: no deadline).
    ``forwarded_allow_ips`` (uvicorn's setting of that name: a comma list of proxy
    addresses or networks, or ``*``) says whose
    ``X-Forwarded-For`` names the client address the per-address limits and log lines
    see; empty (the default) trusts no one's, not even a local client's.
    ``max_inbound_per_second`` / ``inbound_burst`` bound every packet one session sends
    (events and acks alike, dropped undecoded past it; cancels have their own bucket).
    ``handshake_pace``: while more than 20 connects a second are refused, new Engine.IO
    handshakes start at most this many a second, the turns going round the client
    addresses (the others wait, or get 503 past their address's share of 5 s); 0 turns
    it off (a tokenless flood otherwise takes the whole event loop).
    ``notice_interval``: the ``server:update_*`` notices of one sender are relayed at most
    once per this many seconds per kind (the first at once, the last held one at the
    interval's end); 0 relays every one.
    ``redis_url`` may name a service behind Redis Sentinel
    (``redis+sentinel://HOST:PORT,HOST:PORT/DB/SERVICE``); ``redis_password`` is the
    primary's password when the URL carries none, ``redis_sentinel_password`` the
    sentinels' (environment only, never shown by ``repr``).
    ``registry_timeout`` is the deadline of one Redis registry command (``redis_url``):
    a Redis that hangs answers a call 503 after this long, not after a socket timeout.
    ``shutdown_grace`` is how long routed calls in flight may still finish after
    SIGTERM/SIGINT.
    ``jwt_*`` switch authentication to JWT bearer tokens (needs ``a2c-server[jwt]``):
    one key source (``jwt_jwks_url``, ``jwt_public_key`` a PEM file, or an HS256
    ``jwt_secret``) plus the required ``jwt_issuer`` and ``jwt_audience``.
    ``allow_offices`` (patterns like ``team-*``) limits the offices shared-token or
    allow-all clients may join. ``max_requests_per_second`` (with ``request_burst``) is a
    token bucket per session, ``max_connections_per_subject`` caps the sessions one
    identity holds (on all nodes together with ``redis_url``); both are off (None) by default.
    ``audit_calls`` adds one audit record per forwarded ``client:tool_call`` (off by
    default: ``-`` writes them to the log stream, a path appends them to that file).
    ``console`` serves the read-only office console at ``/console``, guarded by
    ``admin_token`` (never shown by ``repr``); without a token only on a loopback host.
    """

    host: str = "127.0.0.1"
    port: int = attrs.field(default=8000, validator=_port)
    socketio_path: str = attrs.field(default="socket.io", converter=_path)
    protocol_version: str = attrs.field(default=PROTOCOL_VERSION, validator=_version)
    protocols: tuple[Line, ...] = attrs.field(default=KNOWN_LINES, converter=_protocols)
    auth_token: str | None = attrs.field(default=None, repr=False)
    max_message_bytes: int = attrs.field(default=DEFAULT_MAX_MESSAGE_BYTES, validator=_positive)
    max_tool_timeout: int = attrs.field(default=300, validator=_max_timeout)
    tool_call_buffer: float = attrs.field(default=5.0, validator=_non_negative)
    forward_timeout: float = attrs.field(default=30.0, validator=_positive)
    ping_interval: float = attrs.field(default=25.0, validator=_positive)
    ping_timeout: float = attrs.field(default=20.0, validator=_positive)
    cors_allowed_origins: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    allowed_hosts: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    log_level: str = attrs.field(default="INFO", converter=_log_level)
    log_format: str = attrs.field(default="text", converter=_log_format)
    log_protocol: bool = False
    shutdown_grace: float = attrs.field(default=10.0, validator=_non_negative)
    redis_url: str | None = attrs.field(default=None, converter=_redis_url, repr=False)
    redis_prefix: str = attrs.field(default="a2c", converter=_redis_prefix)
    redis_password: str | None = attrs.field(default=None, repr=False)
    redis_sentinel_password: str | None = attrs.field(default=None, repr=False)
    node_id: str | None = attrs.field(default=None, converter=_node_id)
    node_ttl: float = attrs.field(default=6.0, validator=_positive)
    registry_timeout: float = attrs.field(default=0.5, validator=_positive)
    max_id_length: int = attrs.field(default=DEFAULT_MAX_ID_LENGTH, validator=_positive)
    max_outgoing_bytes: int = attrs.field(default=16_000_000, validator=_positive)
    max_queued_output_bytes: int = attrs.field(default=256_000_000, validator=_positive)
    admission_timeout: float = attrs.field(default=10.0, validator=_positive)
    join_timeout: float = attrs.field(default=60.0, validator=_non_negative)
    max_unadmitted_per_address: int = attrs.field(default=64, validator=_positive)
    forwarded_allow_ips: str = ""
    max_inbound_per_second: float = attrs.field(default=10_000.0, validator=_positive)
    inbound_burst: int = attrs.field(default=20_000, validator=_positive)
    notice_interval: float = attrs.field(default=0.5, validator=_non_negative)
    handshake_pace: float = attrs.field(default=100.0, validator=_non_negative)
    jwt_jwks_url: str | None = None
    jwt_public_key: str | None = None
    jwt_secret: str | None = attrs.field(default=None, repr=False)
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    allow_offices: tuple[str, ...] = attrs.field(default=(), converter=_patterns)
    max_requests_per_second: float | None = attrs.field(default=None, validator=_positive_or_none)
    request_burst: int = attrs.field(default=20, validator=_positive)
    max_connections_per_subject: int | None = attrs.field(default=None, validator=_positive_or_none)
    audit_calls: str | None = attrs.field(default=None, converter=_audit_calls)
    console: bool = False
    admin_token: str | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.auth_token is not None and not self.auth_token:
            raise SettingsError("auth_token must not be empty (omit it to disable tokens)")
        if self.admin_token is not None and len(self.admin_token) < MIN_ADMIN_TOKEN:
            # The console shows every office of the deployment: a short token is guessable.
            raise SettingsError(
                f"admin_token must be at least {MIN_ADMIN_TOKEN} characters "
                "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(24))')"
            )
        if self.console and not self.admin_token and not is_loopback_host(self.host):
            raise SettingsError(
                f"the console needs an admin token on non-loopback address {self.host} "
                "(--admin-token or A2C_SERVER_ADMIN_TOKEN)"
            )
        _check_jwt(self)

    @property
    def served_versions(self) -> tuple[str, ...]:
        """The version declared on each protocol line served (``0.2.3``, ``0.4.2``).

        ``protocol_version`` replaces its own line's entry; a version outside the served
        lines (an operator pinning, say, ``0.3.0``) is served alone, as before ``protocols``.
        """
        versions = {line: LINE_VERSIONS[line] for line in self.protocols}
        own = line_of(self.protocol_version)
        if own is not None and own in versions:
            versions[own] = self.protocol_version
        elif self.protocol_version != PROTOCOL_VERSION:
            return (self.protocol_version,)
        return tuple(versions.values())

    @property
    def jwt_enabled(self) -> bool:
        """Whether clients authenticate with JWTs (a key source is configured)."""
        sources = (self.jwt_jwks_url, self.jwt_public_key, self.jwt_secret)
        return any(s is not None for s in sources)


def _check_jwt(s: ServerSettings) -> None:
    sources = [s.jwt_jwks_url, s.jwt_public_key, s.jwt_secret]
    given = sum(x is not None for x in sources)
    if given == 0:
        if s.jwt_issuer is not None or s.jwt_audience is not None:
            raise SettingsError(
                "jwt_issuer/jwt_audience need a key source: a JWKS URL, a public key or a secret"
            )
        return
    if given > 1:
        raise SettingsError("give only one of jwt_jwks_url, jwt_public_key and jwt_secret")
    if not s.jwt_issuer or not s.jwt_audience:
        raise SettingsError(
            "JWT authentication needs jwt_issuer and jwt_audience (--jwt-issuer, --jwt-audience)"
        )
    if s.auth_token is not None:
        raise SettingsError("auth_token and JWT authentication exclude each other")
    if s.allow_offices:
        raise SettingsError("allow_offices limits token/allow-all setups; with JWT, grant offices "
                            "in the token's a2c claim")  # fmt: skip
    url = s.jwt_jwks_url
    if url is not None and not (url.startswith("https://") or _loopback_http(url)):
        raise SettingsError(f"jwt_jwks_url must be https:// (http only on loopback), got {url!r}")


def _loopback_http(url: str) -> bool:
    return url.startswith(("http://127.0.0.1:", "http://127.0.0.1/", "http://localhost:",
                           "http://localhost/", "http://[::1]:", "http://[::1]/"))  # fmt: skip
