"""Error codes of protocol 0.2 (errors.md §1).

Two namespaces that must never be mixed: :class:`ErrorCode` values travel in a flat
ErrorPayload's ``code`` field (or a tool result's ``meta.error_code``);
:data:`WS_CLOSE_VERSION_REJECTED` (4900) is only ever a WebSocket close code.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final

__all__ = ["WS_CLOSE_VERSION_REJECTED", "ErrorCode"]


class ErrorCode(IntEnum):
    """Every ErrorPayload / ``meta.error_code`` value defined by protocol 0.2."""

    BAD_REQUEST = 400
    UNAUTHORIZED = 401
    FORBIDDEN = 403
    NOT_FOUND = 404
    TIMEOUT = 408
    INTERNAL_ERROR = 500

    TOOL_NOT_FOUND = 4001
    TOOL_DISABLED = 4002
    TOOL_EXECUTION_FAILED = 4003
    TOOL_TIMEOUT = 4004
    TOOL_REQUIRES_CONFIRMATION = 4005
    TOOL_AUTHORIZATION_REQUIRED = 4006
    TOOL_AUTHORIZATION_FAILED = 4007

    PROTOCOL_VERSION_MISMATCH = 4008

    MCP_SERVER_NOT_FOUND = 4014
    MCP_CAPABILITY_NOT_SUPPORTED = 4015

    ROOM_FULL = 4101
    ROOM_NOT_FOUND = 4102
    NOT_IN_ROOM = 4103
    CROSS_ROOM_ACCESS = 4104


#: WebSocket close code for "A2C version handshake rejected" when the server stack cannot
#: send an HTTP denial response. Not an ErrorPayload code; deliberately unlike 4008.
WS_CLOSE_VERSION_REJECTED: Final = 4900
