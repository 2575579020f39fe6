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
* a ``client:*`` request addressed to another Computer is refused with 403.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from a2c_protocol import (
    ErrorCode,
    ProtocolVersionError,
    RemoteError,
    error_from_handshake_response,
    remote_error_of,
)

__all__ = [
    "ConnectVerdict",
    "judge_namespace_refusal",
    "judge_refusal",
    "refusal_may_pass_later",
]


class ConnectVerdict(enum.Enum):
    VERSION_REFUSED = "version_refused"
    REFUSED = "refused"
    TRANSIENT = "transient"


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
