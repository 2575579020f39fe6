"""Error codes of protocol 0.2 (errors.md §1, plus 4016-4018 of 0.2.1) and 4019 of 0.4.

Two namespaces that must never be mixed: :class:`ErrorCode` values travel in a flat
ErrorPayload's ``code`` field (or a tool result's ``meta.error_code``);
:data:`WS_CLOSE_VERSION_REJECTED` (4900) is only ever a WebSocket close code.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Final

__all__ = [
    "WS_CLOSE_VERSION_REJECTED",
    "BlobReason",
    "BlobWriteReason",
    "ErrorCode",
    "SkillResourceReason",
]


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

    MCP_SERVER_NOT_FOUND = 4014  # since 0.2.1 also an unknown skill name (details.name)
    MCP_CAPABILITY_NOT_SUPPORTED = 4015
    INVALID_SKILL_NAME = 4016  # 0.2.1: client:get_skill name fails the lexer
    SKILL_RESOURCE_NOT_ACCESSIBLE = 4017  # 0.2.1: details.reason, see SkillResourceReason
    BLOB_NOT_ACCESSIBLE = 4018  # 0.2.1: details.reason, see BlobReason
    BLOB_WRITE_FAILED = 4019  # 0.4 (our 0.2 extension): details.reason, see BlobWriteReason

    ROOM_FULL = 4101
    ROOM_NOT_FOUND = 4102
    NOT_IN_ROOM = 4103
    CROSS_ROOM_ACCESS = 4104


#: WebSocket close code for "A2C version handshake rejected" when the server stack cannot
#: send an HTTP denial response. Not an ErrorPayload code; deliberately unlike 4008.
WS_CLOSE_VERSION_REJECTED: Final = 4900


class SkillResourceReason(StrEnum):
    """``details.reason`` values of 4017 known in 0.2.3.

    The set is open: a peer may send a reason not listed here, so code compares the
    received string with these members (``exc.reason == SkillResourceReason.NOT_FOUND``)
    and never converts it (an unknown value means: do not retry, log it).
    """

    TRAVERSAL = "traversal"  # absolute path, "..", or a symlink leaving the package
    FORBIDDEN = "forbidden"  # a sensitive file such as .skillenv; existence not revealed
    NOT_FOUND = "not_found"  # the path is valid but no such file
    TOO_LARGE = "too_large"  # above the Computer's absolute cap; details.total_size says how big


class BlobReason(StrEnum):
    """``details.reason`` values of 4018 known in 0.2.3 (an open set, like 4017's)."""

    INVALID_HANDLE = "invalid_handle"  # malformed, foreign or unknown handle: do not retry
    FORBIDDEN = "forbidden"  # re-authorization failed (e.g. the skill is now orphaned)
    GONE = "gone"  # the source disappeared: ask the producer for a fresh handle
    RANGE = "range"  # chunk_offset < 0 or > total_size: fix the offset and retry


class BlobWriteReason(StrEnum):
    """``details.reason`` values of 4019 (``client:put_blob``) known in 0.4 (an open set)."""

    INVALID_UPLOAD = "invalid_upload"  # unknown or expired upload_id: start again at 0
    INVALID_DECLARATION = "invalid_declaration"  # bad total_size/sha256/blob, or late declaration
    RANGE = "range"  # chunk_offset is not the bytes received, or the sizes do not add up
    TOO_LARGE = "too_large"  # over the per-upload or total landing limit
    BUSY = "busy"  # too many uploads at once: retry later
    FORBIDDEN = "forbidden"  # no landing dir, or uploads not offered on this route
    INTEGRITY = "integrity"  # the bytes do not hash to the declared sha256
    IO_ERROR = "io_error"  # the Computer could not write
