"""How a relayed call ended, read off the answer the Agent gets: one reading for the console
feed and the tracing spans, so both name the same outcome and the same error code."""

from __future__ import annotations

from typing import Any, Literal

Outcome = Literal["ok", "error", "tool error", "no answer"]


def call_outcome(answer: Any) -> tuple[Outcome, int | None]:
    """``("error", code)`` for a flat ErrorPayload (the relay itself failed), ``("tool
    error", code)`` for a tool result with ``isError`` (its code, 4001 unknown tool, 4004
    timeout, ..., is in its meta, ``None`` when it has none), ``("no answer", None)`` for
    ``None``, else ``("ok", None)``."""
    if answer is None:
        return "no answer", None
    if isinstance(answer, dict):
        code = answer.get("code")
        if isinstance(code, int) and isinstance(answer.get("message"), str):
            return "error", code
        if answer.get("isError") is True:
            meta = answer.get("meta") or answer.get("_meta")
            code = meta.get("error_code") if isinstance(meta, dict) else None
            return "tool error", code if isinstance(code, int) else None
    return "ok", None
