"""Connection decisions of the Computer link (handshake-and-versioning.md §4).

Rules:

* a refusal whose authoritative body (or ``X-A2C-Error-Code`` header) says 4008 — or a
  WebSocket close 4900 — is a version refusal: disconnect, raise ``ProtocolVersionError``,
  never retry;
* a namespace refusal (``connect_error``) carrying a flat ErrorPayload is the Server's
  verdict on this client: final, never retried (401 a refused token, 403, 4008 the
  version) — except a 5xx code, which says the Server itself failed and is transient;
* any other failure to connect, and any transport loss after being connected, is
  transient: retry with exponential backoff and re-join the office;
* while reconnecting, a refused re-join whose reason says the name is held (or the
  registry is away) may pass: the holder may be this Computer's own session on a node that
  died and was not reaped yet (``a2c_protocol._rejoin`` RJ2). It is tried again after 0,
  1, 2, 4, 8, 8, ... s and never ends the Computer; a late token (401) from a source that
  can renew is tried again too. Every other refusal stays final (RJ3);
* a ``client:*`` request addressed to another Computer is refused with 403.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from a2c_computer._exceptions import ServerRefusedError
from a2c_protocol import (
    ErrorCode,
    ProtocolVersionError,
    RemoteError,
    error_from_handshake_response,
    join_refusal_may_pass,
    remote_error_of,
)

__all__ = [
    "ConnectVerdict",
    "ReconnectRefusal",
    "judge_namespace_refusal",
    "judge_reconnect_refusal",
    "judge_refusal",
    "refusal_may_pass_later",
]


class ConnectVerdict(enum.Enum):
    VERSION_REFUSED = "version_refused"
    REFUSED = "refused"
    TRANSIENT = "transient"


class ReconnectRefusal(enum.Enum):
    """What a refusal met while reconnecting calls for."""

    FINAL = "final"
    #: A late token: the next attempt reads the credentials again.
    TOKEN = "token"
    #: The name is held, maybe by this Computer's session on a dead node: re-join soon.
    NAME_HELD = "name_held"


def judge_refusal(
    status: int | None, headers: Mapping[str, str], body: bytes | str
) -> tuple[ConnectVerdict, RemoteError | None]:
    """Classify a failed connect from the handshake URL's plain HTTP answer.

    ``status`` None means the HTTP GET itself failed (network): transient.
    """
    if status is None:
        return ConnectVerdict.TRANSIENT, None
    error = error_from_handshake_response(status, headers, body)
    if isinstance(error, ProtocolVersionError):
        return ConnectVerdict.VERSION_REFUSED, error
    if error is None or status >= 500:
        return ConnectVerdict.TRANSIENT, error
    return ConnectVerdict.REFUSED, error


def judge_namespace_refusal(data: object) -> tuple[ConnectVerdict, RemoteError | None]:
    """Classify the data of a ``connect_error`` on the namespace (None when there was none).

    python-socketio wraps the refusal's payload as ``{"message": ..., "data": payload}``.
    """
    if isinstance(data, Mapping) and "data" in data:
        data = data["data"]
    error = remote_error_of(data)
    if error is None:
        return ConnectVerdict.TRANSIENT, None
    if isinstance(error, ProtocolVersionError) or error.code == ErrorCode.PROTOCOL_VERSION_MISMATCH:
        return ConnectVerdict.VERSION_REFUSED, error
    if error.code >= 500 and error.code < 1000:
        return ConnectVerdict.TRANSIENT, error
    return ConnectVerdict.REFUSED, error


def refusal_may_pass_later(error: RemoteError | None, *, credentials_renew: bool) -> bool:
    """Whether a reconnect refused by the Server is worth trying again.

    A 401 (expired or not yet valid token) passes once a renewer writes a fresh token, so it
    is retried while the credentials come from a source that can change (``--token-file``, a
    token provider). Every other refusal (a grant that forbids the role or office, a refused
    join) needs an operator and stays final.
    """
    return credentials_renew and error is not None and error.code == ErrorCode.UNAUTHORIZED


def judge_reconnect_refusal(
    exc: ServerRefusedError, *, credentials_renew: bool
) -> ReconnectRefusal:
    """Classify a refusal met while reconnecting (see the module rules)."""
    if exc.join_reason is not None and join_refusal_may_pass(exc.join_reason):
        return ReconnectRefusal.NAME_HELD
    if refusal_may_pass_later(exc.error, credentials_renew=credentials_renew):
        return ReconnectRefusal.TOKEN
    return ReconnectRefusal.FINAL
