"""The exception tree of ``a2c_server``.

::

    a2c_protocol.A2CError
    └── ServerError                 root of everything this package raises
        ├── AuthenticationError     an auth provider refuses a connection (message is shown
        │                           to the client; never put a token in it)
        ├── SettingsError           invalid server settings (bad flag, env var or value)
        ├── StateConflictError      a state store was asked to break an office invariant
        │   └── SessionReclaimedError  (internal) the session's client reconnected and took
        │                              its place: it must not be put back
        └── StoreUnavailableError   the shared registry (Redis) cannot be reached right now
"""

from __future__ import annotations

from a2c_protocol import A2CError

__all__ = [
    "AuthenticationError",
    "ServerError",
    "SessionReclaimedError",
    "SettingsError",
    "StateConflictError",
    "StoreUnavailableError",
]


class ServerError(A2CError):
    """Root of every exception raised by ``a2c_server``."""


class AuthenticationError(ServerError):
    """Raised by an :class:`~a2c_server.AuthProvider` to refuse a connection.

    The message travels to the client in the Socket.IO ``connect_error``; keep it free of
    secrets.
    """


class SettingsError(ServerError, ValueError):
    """A server setting is out of range or malformed."""


class StateConflictError(ServerError):
    """A state store refused a change that would break an invariant (e.g. a taken name)."""


class SessionReclaimedError(StateConflictError):
    """A session's client reconnected and took its place: it must not be put back."""


class StoreUnavailableError(ServerError):
    """The shared state store cannot be reached; the operation changed nothing.

    Peers see it as a flat 503 error; the node keeps running and retries on the next
    request.
    """

    #: The flat ErrorPayload code peers get (HTTP's "Service Unavailable").
    code = 503
