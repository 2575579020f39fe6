"""Tool-level failures: a ``CallToolResult`` with ``isError``, typed by ``meta.error_code``."""

from __future__ import annotations

from typing import Any, ClassVar

from a2c_protocol._codes import ErrorCode
from a2c_protocol._models import CallToolResult

from ._base import A2CError

__all__ = [
    "ToolAuthorizationError",
    "ToolAuthorizationFailedError",
    "ToolAuthorizationRequiredError",
    "ToolConfirmationRequiredError",
    "ToolDisabledError",
    "ToolError",
    "ToolExecutionError",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "tool_error_from_result",
]


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
