"""The one place that knows the JSON spelling of every model.

:mod:`._hooks` says what JSON each type is, :mod:`._converter` builds the peer and config
converters from the hooks and decodes with them (:mod:`._report` lists the field errors
of a failure); the rest are the rules on top: config documents (:mod:`._config`), flat
ErrorPayloads (:mod:`._errors`) and the ToolMeta string in a tool's meta
(:mod:`._tool_meta`).
"""

from __future__ import annotations

from ._config import config_from_json, parse_iso8601_duration
from ._converter import from_wire, to_wire
from ._errors import error_payload_from_wire, is_error_payload, remote_error_of
from ._tool_meta import (
    A2C_TOOL_META_KEY,
    MCP_TOOL_ANNOTATION_KEY,
    decode_tool_meta,
    encode_tool_meta,
    tool_meta_of,
    with_tool_meta,
)

__all__ = [
    "A2C_TOOL_META_KEY",
    "MCP_TOOL_ANNOTATION_KEY",
    "config_from_json",
    "decode_tool_meta",
    "encode_tool_meta",
    "error_payload_from_wire",
    "from_wire",
    "is_error_payload",
    "parse_iso8601_duration",
    "remote_error_of",
    "to_wire",
    "tool_meta_of",
    "with_tool_meta",
]
