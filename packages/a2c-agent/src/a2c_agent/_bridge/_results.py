"""What a tool call answers the MCP host: A2C results, A2C errors and progress, mapped.

Rules:

* a result passes through as an MCP ``CallToolResult``: its content items, ``isError``,
  ``structuredContent``, and its ``meta`` as ``_meta``; a failed result also gets
  ``_meta.a2c_error_code`` (its ``meta.error_code``) and, when it carries no text, a text
  item saying the code;
* binary items the Agent restored from their blob handles arrive inlined (base64, as MCP
  wants them); an item it did not restore (over the inline limit, or its pull failed) is
  replaced by a text item saying why and naming its handle: an image with empty ``data``
  would break a host's renderer;
* an A2C error raised by the call (a 4xxx or Server code, the Computer gone, a timeout, the
  office unreachable) becomes an ``isError`` result whose text gives the code and message
  and whose ``_meta`` holds ``a2c_error_code`` (when there is one) and ``a2c_error`` (the
  error's class): the host sees a failed tool, never a broken session;
* a progress report becomes MCP ``notifications/progress`` fields unchanged.
"""

from __future__ import annotations

from typing import Any

from a2c_agent._rpc._blobdrain import BLOB_ERROR_KEY
from a2c_protocol import A2CError, CallToolResult, RemoteError, ToolCallProgress, to_wire

__all__ = ["error_result", "mcp_result", "progress_fields", "unreachable_result"]

_HANDLE_KEY = "a2c_blob_handle"


def _unrestored(item: dict[str, Any], computer: str) -> dict[str, Any]:
    meta = item.get("_meta") or {}
    handle = meta.get(_HANDLE_KEY)
    kind = item.get("type", "binary")
    mime = item.get("mimeType") or (item.get("resource") or {}).get("mimeType")
    text = f"[{kind} item{f' ({mime})' if mime else ''} not inlined: {meta[BLOB_ERROR_KEY]}"
    if handle:
        text += f"; blob handle {handle} on A2C Computer '{computer}'"
    return {"type": "text", "text": text + "]", "_meta": dict(meta)}


def _item(item: Any, computer: str) -> Any:
    meta = item.get("_meta") if isinstance(item, dict) else None
    if isinstance(meta, dict) and BLOB_ERROR_KEY in meta:
        return _unrestored(item, computer)
    return item


def mcp_result(result: CallToolResult, computer: str) -> dict[str, Any]:
    """The MCP ``CallToolResult`` (a JSON dict) for an A2C tool result."""
    wire = to_wire(result)
    content = [_item(item, computer) for item in wire.get("content") or []]
    meta = dict(wire.get("meta") or {})
    out: dict[str, Any] = {"content": content, "isError": bool(result.is_error)}
    if wire.get("structuredContent") is not None:
        out["structuredContent"] = wire["structuredContent"]
    if result.is_error:
        code = meta.get("error_code")
        if isinstance(code, int) and not isinstance(code, bool):
            meta["a2c_error_code"] = code
            if not any(isinstance(i, dict) and i.get("type") == "text" for i in content):
                content.append({"type": "text", "text": f"A2C error {code}"})
    if meta:
        out["_meta"] = meta
    return out


def error_result(exc: A2CError, *, computer: str, tool: str) -> dict[str, Any]:
    """An ``isError`` result standing for ``exc``, raised by a call of ``tool``."""
    meta: dict[str, Any] = {"a2c_error": type(exc).__name__}
    if isinstance(exc, RemoteError):
        meta["a2c_error_code"] = exc.code
        text = f"A2C error {exc.code}: {exc.message}"
    else:
        text = f"A2C error ({type(exc).__name__}): {exc}"
    text += f" [tool '{tool}' on A2C Computer '{computer}']"
    return {"content": [{"type": "text", "text": text}], "isError": True, "_meta": meta}


def unreachable_result(office: str, cause: str) -> dict[str, Any]:
    """The ``isError`` result of a call made while the office cannot be reached."""
    text = f"A2C office '{office}' is unreachable: {cause}"
    return {
        "content": [{"type": "text", "text": text}],
        "isError": True,
        "_meta": {"a2c_error": "OfficeUnreachable"},
    }


def progress_fields(report: ToolCallProgress) -> tuple[float, float | None, str | None]:
    """(progress, total, message) of an MCP progress notification for ``report``."""
    return report.progress, report.total, report.message
