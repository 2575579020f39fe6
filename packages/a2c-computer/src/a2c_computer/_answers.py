"""Answers that always fit: the last step before the link sends any ack.

Rules:

* a tool result first moves its large binary items to the blob channel; a binary item over
  the absolute cap (or the spool capacity) turns the result into an ``isError`` result
  that states the item's size and the cap (``meta.error_code`` 4003,
  ``meta.reason = "blob_too_large"``);
* then the encoded answer is measured; one that would exceed the message limit (large
  text, large ``structuredContent``) becomes an ``isError`` result that states its size
  and the limit (``meta.error_code`` 4003, ``meta.reason = "result_too_large"``) and a
  WARN names the sizes: the transport is never dropped because of size;
* any other answer over the limit becomes a flat 500 ErrorPayload saying so.
"""

from __future__ import annotations

import logging
from typing import Any

from a2c_protocol import CallToolResult, ErrorCode, ErrorPayload, to_wire

from ._blob_settings import BlobSettings
from ._blobs import BlobStore
from ._computer import error_result
from ._exceptions import BlobTooLargeError
from ._sideband import ANSWER_MARGIN, encoded_size, offload_binaries

__all__ = ["REASON_BLOB_TOO_LARGE", "REASON_RESULT_TOO_LARGE", "fit_answer", "tool_answer"]

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


def tool_answer(
    result: CallToolResult, *, tool: str, store: BlobStore, mcp_server: str | None = None
) -> dict[str, Any]:
    """The wire form of ``result`` after the sideband, guaranteed to fit (blocking I/O)."""
    settings = store.settings
    try:
        result = offload_binaries(result, settings.inline_budget, store.put_bytes)
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
    wire: dict[str, Any] = to_wire(result)
    size = encoded_size(wire)
    limit = _answer_limit(settings)
    if size <= limit:
        return wire
    _warn_oversize(f"result of tool {tool}", size, settings, "an error result")
    refusal: dict[str, Any] = to_wire(
        error_result(
            ErrorCode.TOOL_EXECUTION_FAILED,
            f"The result of tool {tool!r} is {size} bytes once encoded, more than the "
            f"{limit} bytes one message may carry on this deployment (max_message_bytes="
            f"{settings.max_message_bytes}); only binary items can travel by blob handle. "
            "Ask for less (a range, a page, a summary), or raise the message limit of the "
            "Server and of this Computer together.",
            mcp_server=mcp_server,
            extra={"reason": REASON_RESULT_TOO_LARGE, "size_bytes": size, "limit_bytes": limit},
        )
    )
    return refusal


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
