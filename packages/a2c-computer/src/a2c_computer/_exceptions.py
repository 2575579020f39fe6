"""The exception tree of ``a2c_computer``.

::

    A2CError (a2c_protocol)
    └── ComputerError                 root of everything this package raises
        ├── ConfigError               the configuration file is invalid (lists every field)
        ├── InputResolutionError      an ``${input:...}`` value could not be obtained
        ├── ComputerStateError        an operation was used in the wrong lifecycle state
        ├── TokenStoreError           the store of OAuth sign-ins failed (locked keyring)
        ├── BlobError                 a blob cannot be stored or served
        │   ├── BlobUnavailableError  a handle cannot be served now (``reason``: 4018)
        │   └── BlobTooLargeError     bytes over the absolute cap or the spool capacity
        └── LinkError                 could not connect to or join the Server
            └── ServerRefusedError    the Server refused this Computer (final: token, join)

Protocol refusals from the Server keep their core types (``ProtocolVersionError``).
"""

from __future__ import annotations

from a2c_protocol import A2CError, FieldError, RemoteError

__all__ = [
    "BlobError",
    "BlobTooLargeError",
    "BlobUnavailableError",
    "ComputerError",
    "ComputerStateError",
    "ConfigError",
    "InputResolutionError",
    "LinkError",
    "ServerRefusedError",
    "TokenStoreError",
]


class ComputerError(A2CError):
    """Root of every exception raised by ``a2c_computer``."""


class ConfigError(ComputerError, ValueError):
    """The configuration is invalid; ``errors`` names each field by its JSON path."""

    def __init__(self, message: str, errors: list[FieldError] | None = None) -> None:
        self.errors = list(errors or [])
        super().__init__(message)


class InputResolutionError(ComputerError):
    """An input needed by an MCP server has no value (no env var, prompt or default)."""

    def __init__(self, message: str, *, input_id: str) -> None:
        self.input_id = input_id
        super().__init__(message)


class TokenStoreError(ComputerError):
    """The store of OAuth sign-ins failed (e.g. a locked or unreachable OS keyring)."""


class ComputerStateError(ComputerError, RuntimeError):
    """The Computer is not in a state that allows this operation."""


class BlobError(ComputerError):
    """A blob cannot be stored or served."""


class BlobUnavailableError(BlobError):
    """A handle cannot be served now; ``reason`` is the 4018 reason.

    ``invalid_handle`` (malformed, unknown or foreign), ``forbidden`` (the producer's
    authorization no longer passes), ``gone`` (the source was removed or changed) or
    ``range`` (offset outside ``0..total_size``). Producers that register their own kind
    with :meth:`BlobStore.register_kind` raise it from their resolver.
    """

    def __init__(self, reason: str, message: str | None = None) -> None:
        self.reason = reason
        super().__init__(message or f"blob not accessible: {reason}")


class BlobTooLargeError(BlobError):
    """The bytes exceed the absolute cap (or the whole spool capacity); nothing was stored."""

    def __init__(self, size: int, limit: int, what: str = "the absolute blob cap") -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"{size} bytes exceed {what} of {limit} bytes")


class LinkError(ComputerError):
    """The Computer could not connect to or join the Server (not a version refusal)."""


class ServerRefusedError(LinkError):
    """The Server refused this Computer (a bad token, a refused join).

    ``error`` is the Server's flat ErrorPayload as its typed exception, when it sent one;
    ``join_reason`` the Server's sentence when it was the join that was refused. Final on
    the first connect; while reconnecting, a name held by a session that may be this
    Computer's own on a dead node is tried again (``_server_link._decisions``).
    """

    def __init__(
        self, message: str, error: RemoteError | None = None, *, join_reason: str | None = None
    ) -> None:
        super().__init__(message)
        self.error = error
        self.join_reason = join_reason
