"""Configs written for other MCP hosts, and "did you mean" for names (pure functions).

Rules:

* a document with ``mcpServers`` (the Claude-Desktop shape) and no ``servers`` is converted:
  each entry becomes a server of the same name — ``command``/``args``/``env``/``cwd`` a
  ``stdio`` one; ``url`` (with optional ``headers``) a ``streamable`` one, or ``sse`` when
  its ``type`` says ``sse``; ``disabled`` is kept. Any other key of an entry is an error
  naming it, so nothing is dropped silently. No ToolMeta is invented: the tools need
  confirmation until ``auto_apply`` is set;
* an unknown key, tool or server name is answered with the nearest known one when one is
  close enough; in an ``mcpServers`` entry, a key of our own format (``tool_prefix``, ...)
  is answered with the way to convert the file (``a2c-computer config convert``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from a2c_protocol import (
    CommandInput,
    FieldError,
    MCPServerStdioParameters,
    MCPServerStreamableHttpParameters,
    MCPSSEParameters,
    PickStringInput,
    PromptStringInput,
    SseServerConfig,
    StdioServerConfig,
    StreamableServerConfig,
    ToolMeta,
)

__all__ = ["CONFIG_KEYS", "convert_mcp_servers", "did_you_mean", "is_mcp_servers_document"]

_STDIO_KEYS = frozenset({"command", "args", "env", "cwd"})
_URL_KEYS = frozenset({"url", "headers"})
_COMMON_KEYS = frozenset({"type", "disabled"})


def _keys(*classes: type) -> frozenset[str]:
    return frozenset(f.name for cls in classes for f in attrs.fields(cls))


#: Every key a configuration document may use, at any level (for suggestions).
CONFIG_KEYS: frozenset[str] = _keys(
    StdioServerConfig,
    StreamableServerConfig,
    SseServerConfig,
    MCPServerStdioParameters,
    MCPServerStreamableHttpParameters,
    MCPSSEParameters,
    ToolMeta,
    PromptStringInput,
    PickStringInput,
    CommandInput,
) | {"type", "inputs", "servers"}


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the nearest of ``known``, or ``""`` when none is close."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def is_mcp_servers_document(data: object) -> bool:
    return isinstance(data, Mapping) and "mcpServers" in data and "servers" not in data


def convert_mcp_servers(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
    """Our document for a ``{"mcpServers": {...}}`` one, and the entries' problems."""
    errors: list[FieldError] = []
    servers: dict[str, Any] = {}
    extra = sorted(k for k in data if k != "mcpServers")
    for key in extra:
        errors.append(FieldError(f"$.{key}", "unknown key next to mcpServers"))
    entries = data.get("mcpServers")
    if not isinstance(entries, Mapping):
        return {"servers": {}}, [*errors, FieldError("$.mcpServers", "must be an object")]
    for name, entry in entries.items():
        at = f"$.mcpServers[{name!r}]"
        if not isinstance(entry, Mapping):
            errors.append(FieldError(at, "must be an object"))
            continue
        converted, problems = _convert_entry(str(name), entry, at)
        errors.extend(problems)
        if converted is not None:
            servers[str(name)] = converted
    return {"servers": servers}, errors


def _convert_entry(
    name: str, entry: Mapping[str, Any], at: str
) -> tuple[dict[str, Any] | None, list[FieldError]]:
    kind = str(entry.get("type", "")).lower()
    if "command" in entry:
        allowed, transport = _STDIO_KEYS, "stdio"
    elif "url" in entry:
        allowed = _URL_KEYS
        transport = "sse" if kind == "sse" else "streamable"
    else:
        problem = "needs 'command' (a local server) or 'url' (a remote one)"
        for key in entry:
            near = did_you_mean(str(key), ("command", "url"))
            if near:  # "comand": say so rather than only "needs 'command'"
                problem += f" ({str(key)!r}{near.replace('; ', ': ')})"
                break
        return None, [FieldError(at, problem)]
    unknown = sorted(set(entry) - allowed - _COMMON_KEYS)
    if unknown:
        return None, [
            FieldError(f"{at}.{key}", _unknown_entry_key(key, allowed)) for key in unknown
        ]
    params = {k: entry[k] for k in allowed if k in entry}
    converted: dict[str, Any] = {"type": transport, "name": name, "server_parameters": params}
    if "disabled" in entry:
        converted["disabled"] = entry["disabled"]
    return converted, []


def _unknown_entry_key(key: str, allowed: frozenset[str]) -> str:
    """Why an mcpServers entry's ``key`` is refused, with the nearest key or the way out."""
    near = did_you_mean(key, allowed | _COMMON_KEYS)
    if near:
        return f"unknown key in an mcpServers entry{near}"
    if key in CONFIG_KEYS:
        return (
            f"{key!r} belongs to this Computer's own format, not to mcpServers: convert the "
            "file (a2c-computer config convert FILE -o computer.json) and set it there"
        )
    return "not converted: no equivalent in this Computer's config"
