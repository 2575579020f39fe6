"""Server settings: one frozen, validated value shared by the app factory and the CLI."""

from __future__ import annotations

from typing import Any

import attrs

from a2c_protocol import PROTOCOL_VERSION, InvalidVersionError, ProtocolVersion

from ._auth import is_loopback_host
from ._exceptions import SettingsError
from ._limits import DEFAULT_MAX_ID_LENGTH

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "HARD_MAX_TOOL_TIMEOUT", "ServerSettings"]

#: Default cap on one Engine.IO message (rooms-and-security.md §9 suggests 1 MB).
DEFAULT_MAX_MESSAGE_BYTES = 1_000_000
#: No deployment may accept tool-call timeouts above this (errors.md §6 recommendation).
HARD_MAX_TOOL_TIMEOUT = 3600


def _positive(instance: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value > 0:
        raise SettingsError(f"{attribute.name} must be > 0, got {value!r}")


def _non_negative(instance: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value >= 0:
        raise SettingsError(f"{attribute.name} must be >= 0, got {value!r}")


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


def _path(value: str) -> str:
    path = value.strip().strip("/")
    if not path or any(c in path for c in "?#"):
        raise SettingsError(f"socketio_path must be a non-empty URL path, got {value!r}")
    return path


def _redis_url(value: str | None) -> str | None:
    if value is None:
        return None
    url = value.strip()
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise SettingsError(
            f"redis_url must look like redis://HOST:PORT/DB (or rediss://, unix://), got {value!r}"
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


def _log_level(value: str) -> str:
    level = value.strip().upper()
    if level not in ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG"):
        raise SettingsError(f"log_level must be one of DEBUG/INFO/WARNING/ERROR, got {value!r}")
    return level


def _log_format(value: str) -> str:
    fmt = value.strip().lower()
    if fmt not in ("text", "json"):
        raise SettingsError(f"log_format must be text or json, got {value!r}")
    return fmt


@attrs.frozen(kw_only=True)
class ServerSettings:
    """Everything a deployment can tune. All fields have safe defaults.

    ``socketio_path`` is the Engine.IO mount path without slashes (``"socket.io"`` serves
    ``/socket.io/``); the version gate guards exactly that path. ``auth_token`` switches
    the default authentication from allow-all to the shared-token provider; it is never
    shown by ``repr``. ``tool_call_buffer`` is added to a ``client:tool_call``'s own
    ``timeout`` when the Server waits for the Computer; ``forward_timeout`` is the wait for
    the other ``client:*`` events. ``log_format`` is ``text`` or ``json`` (one object per
    line); ``log_protocol`` lets uvicorn trace HTTP/websocket frames (off by default, even
    at DEBUG: frames carry what clients send).
    ``max_id_length`` bounds identifier strings (``req_id``, names, office ids…);
    ``max_outgoing_bytes`` is how much may wait to be sent to one client before it is
    dropped; an Engine.IO session must be admitted to ``/smcp`` within
    ``admission_timeout`` seconds, and one address may hold
    ``max_unadmitted_per_address`` sessions not admitted yet (see "Security model" in
    docs/server.md).
    ``shutdown_grace`` is how long routed calls in flight may still finish after
    SIGTERM/SIGINT.
    ``console`` serves the read-only office console at ``/console``, guarded by
    ``admin_token`` (never shown by ``repr``); without a token only on a loopback host.
    """

    host: str = "127.0.0.1"
    port: int = attrs.field(default=8000, validator=_port)
    socketio_path: str = attrs.field(default="socket.io", converter=_path)
    protocol_version: str = attrs.field(default=PROTOCOL_VERSION, validator=_version)
    auth_token: str | None = attrs.field(default=None, repr=False)
    max_message_bytes: int = attrs.field(default=DEFAULT_MAX_MESSAGE_BYTES, validator=_positive)
    max_tool_timeout: int = attrs.field(default=300, validator=_max_timeout)
    tool_call_buffer: float = attrs.field(default=5.0, validator=_non_negative)
    forward_timeout: float = attrs.field(default=30.0, validator=_positive)
    ping_interval: float = attrs.field(default=25.0, validator=_positive)
    ping_timeout: float = attrs.field(default=20.0, validator=_positive)
    cors_allowed_origins: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    log_level: str = attrs.field(default="INFO", converter=_log_level)
    log_format: str = attrs.field(default="text", converter=_log_format)
    log_protocol: bool = False
    shutdown_grace: float = attrs.field(default=10.0, validator=_non_negative)
    redis_url: str | None = attrs.field(default=None, converter=_redis_url, repr=False)
    redis_prefix: str = attrs.field(default="a2c", converter=_redis_prefix)
    node_id: str | None = attrs.field(default=None, converter=_node_id)
    node_ttl: float = attrs.field(default=6.0, validator=_positive)
    max_id_length: int = attrs.field(default=DEFAULT_MAX_ID_LENGTH, validator=_positive)
    max_outgoing_bytes: int = attrs.field(default=16_000_000, validator=_positive)
    admission_timeout: float = attrs.field(default=10.0, validator=_positive)
    max_unadmitted_per_address: int = attrs.field(default=64, validator=_positive)
    console: bool = False
    admin_token: str | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.auth_token is not None and not self.auth_token:
            raise SettingsError("auth_token must not be empty (omit it to disable tokens)")
        if self.admin_token is not None and not self.admin_token:
            raise SettingsError("admin_token must not be empty (omit it)")
        if self.console and not self.admin_token and not is_loopback_host(self.host):
            raise SettingsError(
                f"the console needs an admin token on non-loopback address {self.host} "
                "(--admin-token or A2C_SERVER_ADMIN_TOKEN)"
            )
