"""Pure 0.2 <-> 0.4 shape translations of single payload parts (JSON-ready dicts in, new out).

The identity rule that keeps every translation stateless: **a 0.2 MCP server's name is its
0.4 bundle_id, and a 0.4 bundle_id is the 0.2 server name**. So config keys,
``get_resources.mcp_server``, the 4014/4015 server field, window hosts and
``mcp:<server>:<skill>`` skill names keep their values across lines; only key spellings and
a few shapes change. The one thing 0.2 does not carry is which server a tool belongs to:
0.2 tools shown to a 0.4 Agent all belong to the synthetic bundle :data:`LEGACY_BUNDLE`
(their exposed name is ``a2c-0-2__<name>``, stripped again on the way back).

Inputs are never mutated; anything not of the expected shape is passed through unchanged
(the receiving peer's own validation answers it, exactly as without translation).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "BUNDLE_SEPARATOR",
    "LEGACY_BUNDLE",
    "config_02_to_04",
    "config_04_to_02",
    "error_02_to_04",
    "error_04_to_02",
    "pick_options_02_to_04",
    "pick_options_04_to_02",
    "tool_name_04_to_02",
    "tools_02_to_04",
    "tools_04_to_02",
]

#: The bundle every 0.2 tool belongs to when shown to a 0.4 Agent (0.2 does not say which
#: MCP server a tool comes from). A valid 0.4 bundle_id: ``[A-Za-z0-9_-]``, no ``__``.
LEGACY_BUNDLE: Final = "a2c-0-2"
#: 0.4 exposes a tool as ``{bundle_id}__{tool}``.
BUNDLE_SEPARATOR: Final = "__"

_LEGACY_PREFIX: Final = LEGACY_BUNDLE + BUNDLE_SEPARATOR
_SERVER_CODES: Final = frozenset({4014, 4015})
_NAME_02: Final = "mcp_server_name"
_NAME_04: Final = "mcp_server"


# ------------------------------------------------------------------------------ tools


def tools_04_to_02(tools: Any) -> Any:
    """0.4 ``get_tools.tools`` for a 0.2 Agent: ``bundle_id`` dropped, exposed names kept.

    The 0.2 Agent calls ``{bundle_id}__{tool}`` as an opaque name, which the 0.4 Computer
    resolves as is: no rename on the way back.
    """
    if not isinstance(tools, list):
        return tools
    return [
        {k: v for k, v in tool.items() if k != "bundle_id"} if isinstance(tool, dict) else tool
        for tool in tools
    ]


def tools_02_to_04(tools: Any) -> Any:
    """0.2 ``get_tools.tools`` for a 0.4 Agent: each joins :data:`LEGACY_BUNDLE`.

    A ``bundle_id`` the 0.2 tool carries itself (0.2 has no such field) is dropped,
    wherever it stands: it would name a bundle the exposed ``a2c-0-2__`` name does not
    belong to, and a 0.4 Agent grouping by it would call a name no Computer resolves.
    """
    if not isinstance(tools, list):
        return tools
    out: list[Any] = []
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            out.append(tool)
            continue
        shaped: dict[str, Any] = {}
        for key, value in tool.items():
            if key == "bundle_id":
                continue  # the Computer's own; the legacy bundle is set next to the name
            shaped[key] = _LEGACY_PREFIX + value if key == "name" else value
            if key == "name":
                shaped["bundle_id"] = LEGACY_BUNDLE
        out.append(shaped)
    return out


def tool_name_04_to_02(name: Any) -> Any:
    """A 0.4 Agent's ``tool_name`` for a 0.2 Computer: the legacy bundle prefix removed.

    A name without that prefix is passed on unchanged (the Computer answers 4001 for it).
    """
    if isinstance(name, str) and name.startswith(_LEGACY_PREFIX):
        return name[len(_LEGACY_PREFIX) :]
    return name


# ----------------------------------------------------------------------------- config


def pick_options_04_to_02(options: Any) -> Any:
    """``[{label, value}]`` -> ``[value]``: the labels are lost (0.2 shows the value)."""
    if not isinstance(options, list):
        return options
    return [
        item["value"] if isinstance(item, dict) and isinstance(item.get("value"), str) else item
        for item in options
    ]


def pick_options_02_to_04(options: Any) -> Any:
    """``[value]`` -> ``[{label: value, value: value}]`` (0.4 rejects the list of strings)."""
    if not isinstance(options, list):
        return options
    return [{"label": item, "value": item} if isinstance(item, str) else item for item in options]


def _inputs(inputs: Any, convert: Any) -> Any:
    if not isinstance(inputs, list):
        return inputs
    out: list[Any] = []
    for item in inputs:
        if isinstance(item, dict) and item.get("type") == "pickString" and "options" in item:
            item = {k: (convert(v) if k == "options" else v) for k, v in item.items()}
        out.append(item)
    return out


def config_04_to_02(ret: Any) -> Any:
    """0.4 ``get_config`` answer for a 0.2 Agent.

    Keys (bundle_ids) stay: they are the server names the 0.2 Agent addresses. Each entry
    loses ``bundle_id`` (equal to its key); PickString options become their values.
    """
    if not isinstance(ret, dict):
        return ret
    out = dict(ret)
    servers = ret.get("servers")
    if isinstance(servers, dict):
        out["servers"] = {
            key: {k: v for k, v in entry.items() if k != "bundle_id"}
            if isinstance(entry, dict)
            else entry
            for key, entry in servers.items()
        }
    if "inputs" in ret:
        out["inputs"] = _inputs(ret["inputs"], pick_options_04_to_02)
    return out


def config_02_to_04(ret: Any) -> Any:
    """0.2 ``get_config`` answer for a 0.4 Agent: each entry gets ``bundle_id`` = its key."""
    if not isinstance(ret, dict):
        return ret
    out = dict(ret)
    servers = ret.get("servers")
    if isinstance(servers, dict):
        out["servers"] = {
            key: {**entry, "bundle_id": key} if isinstance(entry, dict) else entry
            for key, entry in servers.items()
        }
    if "inputs" in ret:
        out["inputs"] = _inputs(ret["inputs"], pick_options_02_to_04)
    return out


# ----------------------------------------------------------------------------- errors


def _rename(mapping: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    # Same place in the key order; when a peer already sent both spellings, its own wins.
    if old not in mapping:
        return mapping
    if new in mapping:
        return {k: v for k, v in mapping.items() if k != old}
    return {(new if k == old else k): v for k, v in mapping.items()}


def _error(payload: Any, old: str, new: str) -> Any:
    if not isinstance(payload, dict) or payload.get("code") not in _SERVER_CODES:
        return payload
    out = _rename(payload, old, new)
    details = out.get("details")
    if isinstance(details, dict):
        out = {**out, "details": _rename(details, old, new)}
    return out


def error_04_to_02(payload: Any) -> Any:
    """A 0.4 4014/4015 for a 0.2 Agent: ``mcp_server`` -> ``mcp_server_name`` (top and details)."""
    return _error(payload, _NAME_04, _NAME_02)


def error_02_to_04(payload: Any) -> Any:
    """A 0.2 4014/4015 for a 0.4 Agent: ``mcp_server_name`` -> ``mcp_server``."""
    return _error(payload, _NAME_02, _NAME_04)
