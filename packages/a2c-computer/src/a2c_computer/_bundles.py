"""Tools in 0.4 sessions: one bundle per MCP server, the 0.4 way (issue 38 item 4). No I/O.

Rules: a tool's ``bundle_id`` is its MCP server's configured name made a valid 0.4 bundle id
(characters outside ``A-Z a-z 0-9 _ -`` become ``-``, a ``__`` becomes ``_``, empty is
``server``); it is exposed as ``{bundle_id}__{tool}``. A ``tool_name`` coming back is split
at its first ``__`` and resolved only when the bundle is that tool's own; anything else is
passed on unchanged, so the Computer answers it as an unknown tool (4001).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from a2c_protocol._lines import BUNDLE_SEPARATOR

__all__ = ["bundle_id_of", "tool_name_from_04", "tools_for_04"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

#: ``server_of(tool_name) -> MCP server name or None``.
ServerOf = Callable[[str], "str | None"]


def bundle_id_of(server: str) -> str:
    bundle = _UNSAFE.sub("-", server)
    while BUNDLE_SEPARATOR in bundle:
        bundle = bundle.replace(BUNDLE_SEPARATOR, "_")
    return bundle or "server"


def tools_for_04(tools: Any, server_of: ServerOf) -> Any:
    """A 0.2 ``tools`` list (wire dicts) as 0.4 shows it: ``bundle_id`` and qualified names."""
    if not isinstance(tools, list):
        return tools
    out: list[Any] = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        server = server_of(name) if isinstance(name, str) else None
        if server is None:
            out.append(tool)
            continue
        bundle = bundle_id_of(server)
        out.append({**tool, "name": f"{bundle}{BUNDLE_SEPARATOR}{name}", "bundle_id": bundle})
    return out


def tool_name_from_04(name: Any, server_of: ServerOf) -> Any:
    """A 0.4 ``tool_name`` back to this Computer's own tool name (see the rules)."""
    if not isinstance(name, str) or BUNDLE_SEPARATOR not in name:
        return name
    bundle, tool = name.split(BUNDLE_SEPARATOR, 1)
    server = server_of(tool)
    if server is not None and bundle_id_of(server) == bundle:
        return tool
    return name
