"""Answers that always fit: the last step before the link sends any ack.

Rules:

* a tool result first moves its large binary items to the blob channel; a binary item over
  the absolute cap (or the spool capacity) turns the result into an ``isError`` result
  that states the item's size and the cap (``meta.error_code`` 4003,
  ``meta.reason = "blob_too_large"``);
* a string in ``structuredContent`` that duplicates the base64 of an item moved out of
  band is emptied and referenced from ``meta.a2c_structured_refs`` (see
  :func:`a2c_protocol.detach_structured_duplicates`), so a server that returns its image
  twice (content and structured output) still fits;
* then the encoded answer is measured; one that would exceed the message limit (large
  text, large ``structuredContent``) becomes an ``isError`` result that states its size
  and the limit (``meta.error_code`` 4003, ``meta.reason = "result_too_large"``) and a
  WARN names the sizes: the transport is never dropped because of size;
* any other answer over the limit becomes a flat 500 ErrorPayload saying so.
"""

from __future__ import annotations

import logging
from typing import Any

from a2c_computer._blobs import (
    ANSWER_MARGIN,
    BlobSettings,
    BlobStore,
    encoded_size,
    offload_binaries,
)
from a2c_computer._computer import error_result
from a2c_computer._exceptions import BlobTooLargeError
from a2c_protocol import (
    CallToolResult,
    ErrorCode,
    ErrorPayload,
    detach_structured_duplicates,
    to_wire,
)

__all__ = [
    "REASON_BLOB_TOO_LARGE",
    "REASON_RESULT_TOO_LARGE",
    "fit_answer",
    "fit_tool_result",
    "tool_answer",
]

logger = logging.getLogger("a2c_computer.blobs")

REASON_BLOB_TOO_LARGE = "blob_too_large"
REASON_RESULT_TOO_LARGE = "result_too_large"


def _answer_limit(settings: BlobSettings) -> int:
    return settings.max_message_bytes - ANSWER_MARGIN


def _warn_oversize(what: str, size: int, settings: BlobSettings, instead: str) -> None:
    logger.warning(
        "%s is %d bytes encoded, over the message limit (%d usable of max_message_bytes=%d); "
        "answering with %s instead",
        what,
        size,
        _answer_limit(settings),
        settings.max_message_bytes,
        instead,
    )


def fit_tool_result(
    result: CallToolResult, *, tool: str, store: BlobStore, mcp_server: str | None = None
) -> CallToolResult:
    """``result`` after the sideband, guaranteed to fit one answer (blocking I/O)."""
    settings = store.settings
    try:
        offloaded = offload_binaries(result, settings.inline_budget, store.put_bytes)
        result = detach_structured_duplicates(result, offloaded)
    except BlobTooLargeError as exc:
        logger.warning("tool %s returned a binary item of %d bytes: %s", tool, exc.size, exc)
        result = error_result(
            ErrorCode.TOOL_EXECUTION_FAILED,
            f"Tool {tool!r} returned a binary item of {exc.size} bytes, over {exc}; "
            "the result was not sent",
            mcp_server=mcp_server,
            extra={
                "reason": REASON_BLOB_TOO_LARGE,
                "size_bytes": exc.size,
                "limit_bytes": exc.limit,
            },
        )
    size = encoded_size(to_wire(result))
    limit = _answer_limit(settings)
    if size <= limit:
        return result
    _warn_oversize(f"result of tool {tool}", size, settings, "an error result")
    return error_result(
        ErrorCode.TOOL_EXECUTION_FAILED,
        f"The result of tool {tool!r} is {size} bytes once encoded, more than the "
        f"{limit} bytes one message may carry on this deployment (max_message_bytes="
        f"{settings.max_message_bytes}); only binary items can travel by blob handle. "
        "Ask for less (a range, a page, a summary), or raise the message limit of the "
        "Server and of this Computer together.",
        mcp_server=mcp_server,
        extra={"reason": REASON_RESULT_TOO_LARGE, "size_bytes": size, "limit_bytes": limit},
    )


def tool_answer(
    result: CallToolResult, *, tool: str, store: BlobStore, mcp_server: str | None = None
) -> dict[str, Any]:
    """The wire form of :func:`fit_tool_result` (blocking I/O)."""
    wire: dict[str, Any] = to_wire(
        fit_tool_result(result, tool=tool, store=store, mcp_server=mcp_server)
    )
    return wire


def fit_answer(event: str, answer: Any, settings: BlobSettings) -> Any:
    """``answer`` itself when it fits the message limit, else a flat 500 saying why."""
    size = encoded_size(answer)
    limit = _answer_limit(settings)
    if size <= limit:
        return answer
    _warn_oversize(f"answer to {event}", size, settings, "500")
    payload = ErrorPayload(
        code=ErrorCode.INTERNAL_ERROR,
        message=f"the answer to {event} would be {size} bytes, over the {limit}-byte "
        "message limit of this deployment",
        details={"reason": REASON_RESULT_TOO_LARGE, "size_bytes": size, "limit_bytes": limit},
    )
    return to_wire(payload)
