"""Skill names (protocol 0.2.2+ forms) and the lexer the Computer runs before any lookup.

Rules (spec delta §4.2):

- Forms, told apart by segment count: user ``<skill>``, marketplace ``<plugin>:<skill>``,
  MCP ``mcp:<normalized-server>:<skill>``. Only the user and MCP forms are produced here
  (git marketplaces are out of scope), but the lexer accepts all three.
- ``<skill>`` and ``<plugin>`` segments are strict kebab case: ``[a-z0-9-]``, 1–64
  characters, no leading or trailing ``-``, no ``--``.
- The MCP server segment is the raw server name with every character outside
  ``[A-Za-z0-9_-]`` replaced by ``_`` (case kept, no truncation); valid when 1–64 long.
- A name failing the lexer is answered with 4016 before the registry is consulted.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "MCP_PREFIX",
    "USER_SOURCE",
    "is_kebab",
    "lex_skill_name",
    "mcp_skill_name",
    "mcp_source",
    "normalize_server_segment",
    "server_segment_problem",
]

MCP_PREFIX: Final = "mcp"
USER_SOURCE: Final = "user"
_MAX: Final = 64
_KEBAB: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*", re.ASCII)
_SERVER: Final = re.compile(r"[A-Za-z0-9_-]{1,64}", re.ASCII)
_NOT_SERVER_CHAR: Final = re.compile(r"[^A-Za-z0-9_-]", re.ASCII)


def is_kebab(segment: str) -> bool:
    """Strict kebab case, 1–64 characters."""
    return len(segment) <= _MAX and _KEBAB.fullmatch(segment) is not None


def normalize_server_segment(server: str) -> str:
    """The MCP server name as a name segment: ``doc tools.v2`` → ``doc_tools_v2``."""
    return _NOT_SERVER_CHAR.sub("_", server)


def server_segment_problem(segment: str) -> str | None:
    """Why a normalized server segment cannot be used, or None when it can."""
    if not segment:
        return "the MCP server name normalizes to an empty segment"
    if len(segment) > _MAX:
        return f"the MCP server name normalizes to {len(segment)} characters (at most {_MAX})"
    return None


def mcp_source(server: str) -> str:
    """``A2CSkillRef.source`` of an MCP server's skills: ``mcp:<normalized-server>``."""
    return f"{MCP_PREFIX}:{normalize_server_segment(server)}"


def mcp_skill_name(server: str, skill: str) -> str:
    """``mcp:<normalized-server>:<skill>``."""
    return f"{mcp_source(server)}:{skill}"


def lex_skill_name(name: object) -> str | None:
    """Why ``name`` is not a syntactically valid skill name (4016), or None when it is."""
    if not isinstance(name, str) or not name:
        return "a skill name must be a non-empty string"
    segments = name.split(":")
    if len(segments) == 3:
        prefix, server, skill = segments
        if prefix != MCP_PREFIX:
            return f"a three-segment skill name must start with {MCP_PREFIX!r}"
        if not _SERVER.fullmatch(server):
            return "the MCP server segment must be 1-64 characters of [A-Za-z0-9_-]"
        return None if is_kebab(skill) else _kebab_problem("skill")
    if len(segments) == 2:
        plugin, skill = segments
        if not is_kebab(plugin):
            return _kebab_problem("plugin")
        return None if is_kebab(skill) else _kebab_problem("skill")
    if len(segments) == 1:
        return None if is_kebab(name) else _kebab_problem("skill")
    return f"a skill name has 1, 2 or 3 ':'-separated segments, not {len(segments)}"


def _kebab_problem(what: str) -> str:
    return (
        f"the {what} segment must be strict kebab case: 1-{_MAX} characters of [a-z0-9-], "
        "not starting or ending with '-', without '--'"
    )
