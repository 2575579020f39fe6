"""The exception tree of ``a2c_computer``.

::

    A2CError (a2c_protocol)
    └── ComputerError                 root of everything this package raises
        ├── ConfigError               the configuration file is invalid (lists every field)
        ├── InputResolutionError      an ``${input:...}`` value could not be obtained
        └── ComputerStateError        an operation was used in the wrong lifecycle state

Protocol refusals from the Server keep their core types (``ProtocolVersionError``).
"""

from __future__ import annotations

from a2c_protocol import A2CError, FieldError

__all__ = ["ComputerError", "ComputerStateError", "ConfigError", "InputResolutionError"]


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


class ComputerStateError(ComputerError, RuntimeError):
    """The Computer is not in a state that allows this operation."""
