"""One tool call on the wire: the ``client:tool_call`` request out, its answer in.

Both run on every call, so both skip the general (cattrs) converter where the shape is
plain (together they were about a third of the Agent's own CPU per call):

* the request is built as the JSON object ``to_wire(ToolCallReq(...))`` would give, key for
  key (the extension keys only when set);
* an answer that is one JSON object with ``content`` (a list of objects), optionally
  ``isError`` (a boolean) and ``meta`` / ``structuredContent`` (objects or null), and no
  other key, becomes the :class:`~a2c_protocol.CallToolResult` the converter would build.
  Anything else (an ErrorPayload, ``_meta``, an unknown key, a wrong type anywhere, not
  exactly one value) goes through :func:`~a2c_agent._rules.decode_ack`, so errors and
  rarer shapes keep one set of rules and messages.

``tests/rpc/test_agent_toolwire.py`` checks both against the converter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from a2c_agent._rules import decode_ack
from a2c_protocol import CallToolResult, Event

__all__ = ["tool_call_payload", "tool_result_of"]

_PLAIN_KEYS: Final = frozenset({"content", "isError", "meta", "structuredContent"})


def tool_call_payload(
    agent: str,
    req_id: str,
    computer: str,
    tool_name: str,
    params: dict[str, Any],
    timeout: int,
    progress: bool,
    trace: dict[str, str] | None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``client:tool_call`` request as JSON (``ToolCallReq``'s wire spelling)."""
    payload = {
        "agent": agent,
        "req_id": req_id,
        "computer": computer,
        "tool_name": tool_name,
        "params": params,
        "timeout": timeout,
    }
    if progress:
        payload["a2c_progress"] = True
    if trace is not None:
        payload["a2c_trace"] = trace
    if extra is not None:  # the input extension's keys (a2c_input ...)
        payload.update(extra)
    return payload


def tool_result_of(args: Sequence[Any]) -> CallToolResult:
    """The ``CallToolResult`` of a ``client:tool_call`` ack, or the typed error it carries."""
    if len(args) == 1:
        data = args[0]
        if type(data) is dict and data.keys() <= _PLAIN_KEYS:
            content = data.get("content")
            is_error = data.get("isError", False)
            meta = data.get("meta")
            structured = data.get("structuredContent")
            if (
                type(content) is list
                and type(is_error) is bool
                and (meta is None or type(meta) is dict)
                and (structured is None or type(structured) is dict)
                and all(type(item) is dict for item in content)
            ):
                # A new list, as the converter makes; the objects are passed through
                # uncopied, as the converter does for opaque JSON.
                return CallToolResult(
                    content=list(content),
                    is_error=is_error,
                    meta=meta,
                    structured_content=structured,
                )
    return decode_ack(Event.TOOL_CALL, CallToolResult, args)
