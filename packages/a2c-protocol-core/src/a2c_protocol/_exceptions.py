"""The exception tree of ``a2c_protocol``; every error the core raises is an ``A2CError``.

::

    A2CError
    ├── InvalidPayloadError           a payload failed validation (carries every field error)
    ├── InvalidWindowURIError         a string is not a valid window:// URI
    ├── InvalidPriorityError          a priority is outside the allowed range or type
    ├── RemoteError                   a flat ErrorPayload received from a peer
    │   ├── BadRequestError (400)  UnauthorizedError (401)  ForbiddenError (403)
    │   ├── NotFoundError (404)  RequestTimeoutError (408)  InternalError (500)
    │   ├── ProtocolVersionError (4008, or WebSocket close 4900)
    │   ├── McpServerNotFoundError (4014)
    │   │   └── SkillNotFoundError (4014 with details.name: an unknown skill)
    │   ├── CapabilityNotSupportedError (4015)
    │   ├── InvalidSkillNameError (4016)  SkillResourceError (4017, .reason)
    │   ├── BlobNotAccessibleError (4018, .reason)
    │   ├── BlobWriteError (4019, .reason)
    │   └── RoomFullError (4101)  RoomNotFoundError (4102)  NotInOfficeError (4103)
    │       CrossOfficeError (4104)
    └── ToolError                     a CallToolResult with isError (code from meta.error_code)
        ├── ToolNotFoundError (4001)  ToolDisabledError (4002)  ToolExecutionError (4003)
        ├── ToolTimeoutError (4004)  ToolConfirmationRequiredError (4005)
        └── ToolAuthorizationError
            ├── ToolAuthorizationRequiredError (4006)
            └── ToolAuthorizationFailedError (4007)

Conversions both ways: ``error_from_payload(payload)`` and ``RemoteError.to_payload()``;
``tool_error_from_result(result)`` and ``ToolError.result``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ._codes import WS_CLOSE_VERSION_REJECTED, ErrorCode
from ._models import (
    CallToolResult,
    CapabilityNotSupportedPayload,
    ErrorPayload,
    JsonObject,
    McpServerNotFoundPayload,
    VersionMismatchPayload,
)

__all__ = [
    "A2CError",
    "AnyErrorPayload",
    "BadRequestError",
    "BlobNotAccessibleError",
    "BlobWriteError",
    "CapabilityNotSupportedError",
    "CrossOfficeError",
    "FieldError",
    "ForbiddenError",
    "InternalError",
    "InvalidPayloadError",
    "InvalidPriorityError",
    "InvalidSkillNameError",
    "InvalidWindowURIError",
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
    "ToolAuthorizationError",
    "ToolAuthorizationFailedError",
    "ToolAuthorizationRequiredError",
    "ToolConfirmationRequiredError",
    "ToolDisabledError",
    "ToolError",
    "ToolExecutionError",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "UnauthorizedError",
    "error_from_payload",
    "tool_error_from_result",
]

AnyErrorPayload = (
    ErrorPayload | VersionMismatchPayload | McpServerNotFoundPayload | CapabilityNotSupportedPayload
)


class A2CError(Exception):
    """Root of every exception raised by the A2C-SMCP packages."""


class FieldError(tuple[str, str]):
    """``(path, problem)``: one validation failure, e.g. ``("$.timeout", "expected int")``."""

    __slots__ = ()

    def __new__(cls, path: str, problem: str) -> FieldError:
        return super().__new__(cls, (path, problem))

    @property
    def path(self) -> str:
        return self[0]

    @property
    def problem(self) -> str:
        return self[1]

    def __str__(self) -> str:
        field = self.path.rsplit(".", 1)[-1].split("[", 1)[0].lstrip("$") or "payload"
        return f"{field}: {self.problem} @ {self.path}"


class InvalidPayloadError(A2CError, ValueError):
    """A payload does not match its model. ``errors`` lists every field that failed."""

    def __init__(self, model: str, errors: list[FieldError]) -> None:
        self.model = model
        self.errors = errors
        super().__init__(f"invalid {model}: " + "; ".join(str(e) for e in errors))

    def to_payload(self) -> ErrorPayload:
        """The flat 400 ErrorPayload a role answers with."""
        return ErrorPayload(
            code=ErrorCode.BAD_REQUEST,
            message=str(self),
            details={"errors": [{"path": e.path, "problem": e.problem} for e in self.errors]},
        )


class InvalidWindowURIError(A2CError, ValueError):
    """A string is not a valid ``window://`` URI; the message names the rule broken."""


class InvalidPriorityError(A2CError, ValueError):
    """A window priority is not a number in the allowed range."""


# ------------------------------------------------------------------ remote errors


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


# -------------------------------------------------------------------- tool errors


class ToolError(A2CError):
    """A tool-level failure: a ``CallToolResult`` with ``isError: true``.

    ``code`` is ``meta.error_code`` (None when the Computer gave none); ``result`` is the
    whole result, so nothing is lost.
    """

    code_value: ClassVar[int | None] = None

    def __init__(self, result: CallToolResult) -> None:
        self.result = result
        meta = result.meta or {}
        code = meta.get("error_code")
        self.code: int | None = code if isinstance(code, int) else self.code_value
        mcp_server = meta.get("mcp_server")
        self.mcp_server: str | None = mcp_server if isinstance(mcp_server, str) else None
        self.message = _result_text(result) or "tool call failed"
        prefix = f"[{self.code}] " if self.code is not None else ""
        super().__init__(prefix + self.message)


def _result_text(result: CallToolResult) -> str:
    texts = [
        block["text"]
        for block in result.content
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts)


class ToolNotFoundError(ToolError):
    code_value = ErrorCode.TOOL_NOT_FOUND


class ToolDisabledError(ToolError):
    code_value = ErrorCode.TOOL_DISABLED


class ToolExecutionError(ToolError):
    code_value = ErrorCode.TOOL_EXECUTION_FAILED


class ToolTimeoutError(ToolError):
    code_value = ErrorCode.TOOL_TIMEOUT


class ToolConfirmationRequiredError(ToolError):
    code_value = ErrorCode.TOOL_REQUIRES_CONFIRMATION


class ToolAuthorizationError(ToolError):
    """4006/4007: upstream authorization; ``auth_hint`` is safe to show to a user."""

    def __init__(self, result: CallToolResult) -> None:
        super().__init__(result)
        hint: Any = (result.meta or {}).get("auth_hint")
        self.auth_hint: dict[str, str] = (
            {k: v for k, v in hint.items() if k in ("action", "message") and isinstance(v, str)}
            if isinstance(hint, dict)
            else {}
        )

    @property
    def hint_message(self) -> str | None:
        """The user-readable sentence of ``auth_hint``, if the Computer gave one."""
        return self.auth_hint.get("message")


class ToolAuthorizationRequiredError(ToolAuthorizationError):
    code_value = ErrorCode.TOOL_AUTHORIZATION_REQUIRED


class ToolAuthorizationFailedError(ToolAuthorizationError):
    code_value = ErrorCode.TOOL_AUTHORIZATION_FAILED


_TOOL_BY_CODE: dict[int, type[ToolError]] = {
    cls.code_value: cls
    for cls in (
        ToolNotFoundError,
        ToolDisabledError,
        ToolExecutionError,
        ToolTimeoutError,
        ToolConfirmationRequiredError,
        ToolAuthorizationRequiredError,
        ToolAuthorizationFailedError,
    )
    if cls.code_value is not None
}


def tool_error_from_result(result: CallToolResult) -> ToolError | None:
    """The typed exception for a failed tool result, or None when it succeeded."""
    if not result.is_error:
        return None
    code = (result.meta or {}).get("error_code")
    cls = _TOOL_BY_CODE.get(code, ToolError) if isinstance(code, int) else ToolError
    return cls(result)
