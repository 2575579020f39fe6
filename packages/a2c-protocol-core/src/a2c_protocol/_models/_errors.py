"""The flat ErrorPayload and its typed variants (4008, 4014, 4015).

The exceptions that raise and answer them live in :mod:`a2c_protocol._exceptions`.
"""

from __future__ import annotations

import attrs

from ._fields import JsonObject, _opt

__all__ = [
    "CapabilityNotSupportedPayload",
    "ErrorPayload",
    "McpServerNotFoundPayload",
    "VersionMismatchPayload",
]


# ---------------------------------------------------------------- error payloads


@attrs.frozen(kw_only=True)
class _FlatError:
    """``code`` and ``message``: what every flat ErrorPayload starts with."""

    code: int
    message: str


@attrs.frozen(kw_only=True)
class ErrorPayload(_FlatError):
    """Flat protocol error: ``{code, message, [code-specific fields], [details]}``."""

    details: JsonObject | None = _opt()


@attrs.frozen(kw_only=True)
class VersionMismatchPayload(_FlatError):
    """4008: the handshake's HTTP 400 body. All six fields are required."""

    server_version: str
    client_version: str
    min_supported: str
    max_supported: str
    details: JsonObject | None = _opt()


@attrs.frozen(kw_only=True)
class McpServerNotFoundPayload(_FlatError):
    """4014: ``mcp_server`` is not registered (or not running) on the Computer.

    Since 0.2.1 4014 also answers ``client:get_skill`` for an unknown skill name, with the
    name in ``details.name`` and no ``mcp_server_name``; so that field is optional.
    """

    mcp_server_name: str | None = _opt()
    details: JsonObject | None = _opt()


@attrs.frozen(kw_only=True)
class CapabilityNotSupportedPayload(_FlatError):
    """4015: the MCP server did not declare ``capability``."""

    mcp_server_name: str
    capability: str
    details: JsonObject | None = _opt()
