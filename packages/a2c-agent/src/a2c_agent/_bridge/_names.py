"""Tool names the MCP host sees: ``<computer><separator><tool>``, made safe and unique.

Rules:

* a name is built from the Computer's name, the separator (default ``__``) and the tool's
  name as the Computer exposes it;
* it keeps only ``A-Z a-z 0-9 _ -`` and at most 64 characters: the MCP name rules allow
  ``.`` too and 128 characters, but the model APIs most hosts forward tools to do not, and a
  name they refuse breaks the host's whole tool list;
* a name that needed changing (a character replaced, or cut to fit) ends with ``_`` and 8
  hex digits of a digest of the exact (computer, tool) pair, so it depends on that pair
  only and stays the same when other Computers come and go;
* when two pairs still end on one name (``a__b`` + ``c`` and ``a`` + ``b__c``), each of
  them gets the digest suffix: nothing is served under an ambiguous name;
* a separator is 1 to 8 characters of ``A-Z a-z 0-9 _ -``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Final

__all__ = [
    "DEFAULT_SEPARATOR",
    "MAX_NAME_LENGTH",
    "is_valid_name",
    "separator_problem",
    "tool_names",
]

DEFAULT_SEPARATOR: Final = "__"
MAX_NAME_LENGTH: Final = 64
_ALLOWED: Final = re.compile(r"[A-Za-z0-9_-]")
_FORBIDDEN_RUN: Final = re.compile(r"[^A-Za-z0-9_-]")
_SEPARATOR: Final = re.compile(r"[A-Za-z0-9_-]{1,8}")
_DIGEST_LENGTH: Final = 8


def separator_problem(separator: str) -> str | None:
    """Why ``separator`` cannot join names (None when it can)."""
    if _SEPARATOR.fullmatch(separator):
        return None
    return f"must be 1 to 8 characters of A-Z a-z 0-9 _ -, got {separator!r}"


def _digest(computer: str, tool: str) -> str:
    raw = f"{computer}\0{tool}".encode()
    return hashlib.sha256(raw).hexdigest()[:_DIGEST_LENGTH]


def _with_digest(name: str, computer: str, tool: str) -> str:
    suffix = f"_{_digest(computer, tool)}"
    return name[: MAX_NAME_LENGTH - len(suffix)] + suffix


def _plain(computer: str, tool: str, separator: str) -> tuple[str, bool]:
    """The joined, sanitised name and whether it had to change to be valid."""
    raw = f"{computer}{separator}{tool}"
    clean = _FORBIDDEN_RUN.sub("_", raw)
    changed = clean != raw or len(clean) > MAX_NAME_LENGTH or not clean
    return clean, changed


def tool_names(
    pairs: Iterable[tuple[str, str]], separator: str = DEFAULT_SEPARATOR
) -> dict[tuple[str, str], str]:
    """(computer, tool) → the unique, valid name it is served under (see module rules)."""
    problem = separator_problem(separator)
    if problem is not None:
        raise ValueError(f"separator {problem}")
    chosen: dict[tuple[str, str], str] = {}
    for computer, tool in pairs:
        name, changed = _plain(computer, tool, separator)
        chosen[(computer, tool)] = _with_digest(name, computer, tool) if changed else name
    by_name: dict[str, list[tuple[str, str]]] = {}
    for pair, name in chosen.items():
        by_name.setdefault(name, []).append(pair)
    for name, owners in by_name.items():
        if len(owners) > 1:
            for computer, tool in owners:
                chosen[(computer, tool)] = _with_digest(name, computer, tool)
    return chosen


def is_valid_name(name: str) -> bool:
    """True when ``name`` keeps the rules this module builds names by."""
    return 0 < len(name) <= MAX_NAME_LENGTH and all(_ALLOWED.fullmatch(c) for c in name)
