"""Errors a peer answered: a flat ErrorPayload, one class per code, and back again."""

from __future__ import annotations

from typing import Any, ClassVar

from a2c_protocol._codes import WS_CLOSE_VERSION_REJECTED, ErrorCode
from a2c_protocol._models import (
    CapabilityNotSupportedPayload,
    ErrorPayload,
    JsonObject,
    McpServerNotFoundPayload,
    VersionMismatchPayload,
)

from ._base import A2CError

__all__ = [
    "AnyErrorPayload",
    "BadRequestError",
    "BlobNotAccessibleError",
    "BlobWriteError",
    "CapabilityNotSupportedError",
    "CrossOfficeError",
    "ForbiddenError",
    "InternalError",
    "InvalidSkillNameError",
    "McpServerNotFoundError",
    "NotFoundError",
    "NotInOfficeError",
    "ProtocolVersionError",
    "RemoteError",
    "RequestTimeoutError",
    "RoomFullError",
    "RoomNotFoundError",
    "SkillNotFoundError",
    "SkillResourceError",
    "UnauthorizedError",
    "error_from_payload",
]

AnyErrorPayload = (
    ErrorPayload | VersionMismatchPayload | McpServerNotFoundPayload | CapabilityNotSupportedPayload
)


class RemoteError(A2CError):
    """A flat ErrorPayload answered by a peer (Server or Computer)."""

    code_value: ClassVar[int | None] = None

    def __init__(
        self, message: str, *, code: int | None = None, details: JsonObject | None = None
    ) -> None:
        resolved = code if code is not None else self.code_value
        if resolved is None:
            raise TypeError(f"{type(self).__name__} needs a code")
        self.code: int = resolved
        self.message = message
        self.details = details
        super().__init__(f"[{resolved}] {message}")

    def to_payload(self) -> AnyErrorPayload:
        """The flat ErrorPayload this exception stands for."""
        return ErrorPayload(code=self.code, message=self.message, details=self.details)


class BadRequestError(RemoteError):
    code_value = ErrorCode.BAD_REQUEST


class UnauthorizedError(RemoteError):
    code_value = ErrorCode.UNAUTHORIZED


class ForbiddenError(RemoteError):
    code_value = ErrorCode.FORBIDDEN


class NotFoundError(RemoteError):
    code_value = ErrorCode.NOT_FOUND


class RequestTimeoutError(RemoteError):
    code_value = ErrorCode.TIMEOUT


class InternalError(RemoteError):
    code_value = ErrorCode.INTERNAL_ERROR


class RoomFullError(RemoteError):
    code_value = ErrorCode.ROOM_FULL


class RoomNotFoundError(RemoteError):
    code_value = ErrorCode.ROOM_NOT_FOUND


class NotInOfficeError(RemoteError):
    code_value = ErrorCode.NOT_IN_ROOM


class CrossOfficeError(RemoteError):
    code_value = ErrorCode.CROSS_ROOM_ACCESS


class ProtocolVersionError(RemoteError):
    """The Server refused the handshake: 4008 (HTTP 400 body) or WebSocket close 4900.

    For 4900 without a readable body the version fields may be empty strings.
    """

    code_value = ErrorCode.PROTOCOL_VERSION_MISMATCH

    def __init__(
        self,
        message: str,
        *,
        server_version: str,
        client_version: str,
        min_supported: str,
        max_supported: str,
        code: int = ErrorCode.PROTOCOL_VERSION_MISMATCH,
        details: JsonObject | None = None,
    ) -> None:
        self.server_version = server_version
        self.client_version = client_version
        self.min_supported = min_supported
        self.max_supported = max_supported
        super().__init__(message, code=code, details=details)
        if code == WS_CLOSE_VERSION_REJECTED and not server_version:
            detail = "WebSocket-only handshake rejected (close 4900); versions unknown"
        else:
            detail = (
                f"client speaks a2c {client_version or '?'}, server runs {server_version or '?'}"
                f" (accepts {min_supported or '?'}..{max_supported or '?'})"
            )
        self.args = (f"[{self.code}] {message}: {detail}",)

    def to_payload(self) -> VersionMismatchPayload:
        return VersionMismatchPayload(
            code=self.code,
            message=self.message,
            server_version=self.server_version,
            client_version=self.client_version,
            min_supported=self.min_supported,
            max_supported=self.max_supported,
            details=self.details,
        )


class McpServerNotFoundError(RemoteError):
    """4014: the named MCP server is not registered on the Computer.

    ``mcp_server_name`` is None when the peer left it out, as 4014 for skills does
    (see :class:`SkillNotFoundError`).
    """

    code_value = ErrorCode.MCP_SERVER_NOT_FOUND

    def __init__(
        self, message: str, *, mcp_server_name: str | None = None, details: JsonObject | None = None
    ) -> None:
        self.mcp_server_name = mcp_server_name
        super().__init__(message, details=details)

    def to_payload(self) -> McpServerNotFoundPayload:
        return McpServerNotFoundPayload(
            code=self.code,
            message=self.message,
            mcp_server_name=self.mcp_server_name,
            details=self.details,
        )


class SkillNotFoundError(McpServerNotFoundError):
    """4014 from ``client:get_skill``: the name is well formed but not installed.

    The name travels in ``details.name`` (spec delta A4). Refresh ``client:get_skills``
    before retrying. Raise it on a Computer with ``SkillNotFoundError(name=...)``.
    """

    def __init__(
        self,
        message: str = "Skill not found",
        *,
        name: str | None = None,
        mcp_server_name: str | None = None,
        details: JsonObject | None = None,
    ) -> None:
        merged = _with_details(details, name=name)
        super().__init__(message, mcp_server_name=mcp_server_name, details=merged)
        self.name = _detail_str(merged, "name")


class CapabilityNotSupportedError(RemoteError):
    """4015: the MCP server lacks ``capability`` (e.g. ``"resources"``)."""

    code_value = ErrorCode.MCP_CAPABILITY_NOT_SUPPORTED

    def __init__(
        self,
        message: str,
        *,
        mcp_server_name: str,
        capability: str,
        details: JsonObject | None = None,
    ) -> None:
        self.mcp_server_name = mcp_server_name
        self.capability = capability
        super().__init__(message, details=details)

    def to_payload(self) -> CapabilityNotSupportedPayload:
        return CapabilityNotSupportedPayload(
            code=self.code,
            message=self.message,
            mcp_server_name=self.mcp_server_name,
            capability=self.capability,
            details=self.details,
        )


class InvalidSkillNameError(RemoteError):
    """4016: a ``client:get_skill`` name fails the skill-name lexer. Do not retry.

    ``name`` is the rejected name from ``details.name`` (diagnostic, never shown to users).
    """

    code_value = ErrorCode.INVALID_SKILL_NAME

    def __init__(
        self,
        message: str = "Invalid skill name",
        *,
        name: str | None = None,
        code: int | None = None,
        details: JsonObject | None = None,
    ) -> None:
        merged = _with_details(details, name=name)
        super().__init__(message, code=code, details=merged)
        self.name = _detail_str(merged, "name")


class SkillResourceError(RemoteError):
    """4017: a skill file cannot be served (mint time of ``client:get_skill``).

    ``reason`` is the raw ``details.reason``: compare it with
    :class:`~a2c_protocol.SkillResourceReason` members. It may be a value this version does
    not know (or None when a peer omitted it); treat those as "do not retry".
    ``total_size`` accompanies ``too_large``.
    """

    code_value = ErrorCode.SKILL_RESOURCE_NOT_ACCESSIBLE

    def __init__(
        self,
        message: str = "Skill resource not accessible",
        *,
        reason: str | None = None,
        rel_path: str | None = None,
        total_size: int | None = None,
        code: int | None = None,
        details: JsonObject | None = None,
    ) -> None:
        merged = _with_details(details, reason=reason, rel_path=rel_path, total_size=total_size)
        super().__init__(message, code=code, details=merged)
        self.reason = _detail_str(merged, "reason")
        self.rel_path = _detail_str(merged, "rel_path")
        size = (merged or {}).get("total_size")
        self.total_size: int | None = (
            size if isinstance(size, int) and not isinstance(size, bool) else None
        )


class BlobNotAccessibleError(RemoteError):
    """4018: a ``client:get_blob`` handle cannot be served (pull time).

    ``reason`` is the raw ``details.reason``, compared with :class:`~a2c_protocol.BlobReason`
    members (``gone``: ask the producer again; ``range``: fix the offset; others and
    unknown values: do not retry).
    """

    code_value = ErrorCode.BLOB_NOT_ACCESSIBLE

    def __init__(
        self,
        message: str = "Blob not accessible",
        *,
        reason: str | None = None,
        code: int | None = None,
        details: JsonObject | None = None,
    ) -> None:
        merged = _with_details(details, reason=reason)
        super().__init__(message, code=code, details=merged)
        self.reason = _detail_str(merged, "reason")


class BlobWriteError(RemoteError):
    """4019: a ``client:put_blob`` chunk was refused (upload time).

    ``reason`` is the raw ``details.reason``, compared with
    :class:`~a2c_protocol.BlobWriteReason` members (``busy``: retry later, from offset 0
    with a new upload; others and unknown values: do not retry as is).
    """

    code_value = ErrorCode.BLOB_WRITE_FAILED

    def __init__(
        self,
        message: str = "Blob write failed",
        *,
        reason: str | None = None,
        code: int | None = None,
        details: JsonObject | None = None,
    ) -> None:
        merged = _with_details(details, reason=reason)
        super().__init__(message, code=code, details=merged)
        self.reason = _detail_str(merged, "reason")


def _with_details(details: JsonObject | None, **given: Any) -> JsonObject | None:
    """``details`` plus the explicitly given keys (which win); None when empty."""
    merged = dict(details or {})
    merged.update({k: v for k, v in given.items() if v is not None})
    return merged or None


def _detail_str(details: JsonObject | None, key: str) -> str | None:
    value = (details or {}).get(key)
    return value if isinstance(value, str) else None


_REMOTE_BY_CODE: dict[int, type[RemoteError]] = {
    cls.code_value: cls
    for cls in (
        BadRequestError,
        UnauthorizedError,
        ForbiddenError,
        NotFoundError,
        RequestTimeoutError,
        InternalError,
        RoomFullError,
        RoomNotFoundError,
        NotInOfficeError,
        CrossOfficeError,
        InvalidSkillNameError,
        SkillResourceError,
        BlobNotAccessibleError,
        BlobWriteError,
    )
    if cls.code_value is not None
}


def error_from_payload(payload: AnyErrorPayload) -> RemoteError:
    """The typed exception for a decoded ErrorPayload (unknown codes give ``RemoteError``)."""
    if isinstance(payload, VersionMismatchPayload):
        return ProtocolVersionError(
            payload.message,
            server_version=payload.server_version,
            client_version=payload.client_version,
            min_supported=payload.min_supported,
            max_supported=payload.max_supported,
            code=payload.code,
            details=payload.details,
        )
    if isinstance(payload, McpServerNotFoundPayload):
        if payload.mcp_server_name is None and _detail_str(payload.details, "name") is not None:
            return SkillNotFoundError(payload.message, details=payload.details)
        return McpServerNotFoundError(
            payload.message, mcp_server_name=payload.mcp_server_name, details=payload.details
        )
    if isinstance(payload, CapabilityNotSupportedPayload):
        return CapabilityNotSupportedError(
            payload.message,
            mcp_server_name=payload.mcp_server_name,
            capability=payload.capability,
            details=payload.details,
        )
    cls = _REMOTE_BY_CODE.get(payload.code, RemoteError)
    return cls(payload.message, code=payload.code, details=payload.details)
