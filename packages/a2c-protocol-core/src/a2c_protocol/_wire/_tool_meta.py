"""ToolMeta inside ``SMCPTool.meta``: a JSON *string* under ``a2c_tool_meta``."""

from __future__ import annotations

import json
from typing import Final

import attrs

from a2c_protocol._exceptions import FieldError, InvalidPayloadError
from a2c_protocol._models import SMCPTool, ToolMeta

from ._converter import from_wire, to_wire

#: ``SMCPTool.meta`` key holding the merged ToolMeta as a JSON string.
A2C_TOOL_META_KEY: Final = "a2c_tool_meta"
#: ``SMCPTool.meta`` key holding MCP's tool annotations as a JSON string.
MCP_TOOL_ANNOTATION_KEY: Final = "MCP_TOOL_ANNOTATION"


def encode_tool_meta(meta: ToolMeta) -> str:
    """The JSON string stored in ``SMCPTool.meta["a2c_tool_meta"]`` (all four keys)."""
    return json.dumps(to_wire(meta), ensure_ascii=False, separators=(", ", ": "))


def decode_tool_meta(text: str) -> ToolMeta:
    """Parse an ``a2c_tool_meta`` string; unknown keys are ignored (other SDKs add some)."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise InvalidPayloadError("ToolMeta", [FieldError("$", f"not JSON: {exc}")]) from exc
    return from_wire(ToolMeta, data)


def tool_meta_of(tool: SMCPTool) -> ToolMeta | None:
    """The parsed ToolMeta of a tool, or None when it has no ``a2c_tool_meta``."""
    raw = (tool.meta or {}).get(A2C_TOOL_META_KEY)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidPayloadError(
            "SMCPTool", [FieldError(f"$.meta.{A2C_TOOL_META_KEY}", "must be a JSON string")]
        )
    return decode_tool_meta(raw)


def with_tool_meta(tool: SMCPTool, meta: ToolMeta | None) -> SMCPTool:
    """A copy of ``tool`` whose ``a2c_tool_meta`` is ``meta`` (removed when None)."""
    attributes = dict(tool.meta or {})
    if meta is None:
        attributes.pop(A2C_TOOL_META_KEY, None)
    else:
        attributes[A2C_TOOL_META_KEY] = encode_tool_meta(meta)
    return attrs.evolve(tool, meta=attributes)
