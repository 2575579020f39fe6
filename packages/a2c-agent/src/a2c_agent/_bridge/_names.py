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
* when two pairs still end on one name (``a__b`` + ``c`` and ``a`` + ``b__c``, or a plain
  name that looks like another pair's digest name), each of them gets a digest suffix, and
  this is repeated (the digest salted with the round) until no two pairs share a name:
  nothing is served under an ambiguous name and no tool is left without one, whatever
  names another Computer picks; should a crafted digest collision survive every round, the
  pairs still sharing a name are numbered in sorted order;
* a separator is 1 to 8 characters of ``A-Z a-z 0-9 _ -``.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
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
#: renaming rounds before the numbered fallback (each needs a crafted digest collision)
_ROUNDS: Final = 8


def separator_problem(separator: str) -> str | None:
    """Why ``separator`` cannot join names (None when it can)."""
    if _SEPARATOR.fullmatch(separator):
        return None
    return f"must be 1 to 8 characters of A-Z a-z 0-9 _ -, got {separator!r}"


def _digest(computer: str, tool: str, salt: int = 0) -> str:
    raw = f"{computer}\0{tool}" + (f"\0{salt}" if salt else "")
    return hashlib.sha256(raw.encode()).hexdigest()[:_DIGEST_LENGTH]


def _with_suffix(name: str, suffix: str) -> str:
    return name[: MAX_NAME_LENGTH - len(suffix)] + suffix


def _with_digest(name: str, computer: str, tool: str, salt: int = 0) -> str:
    return _with_suffix(name, f"_{_digest(computer, tool, salt)}")


def _plain(computer: str, tool: str, separator: str) -> tuple[str, bool]:
    """The joined, sanitised name and whether it had to change to be valid."""
    raw = f"{computer}{separator}{tool}"
    clean = _FORBIDDEN_RUN.sub("_", raw)
    changed = clean != raw or len(clean) > MAX_NAME_LENGTH or not clean
    return clean, changed


def tool_names(
    pairs: Iterable[tuple[str, str]],
    separator: str = DEFAULT_SEPARATOR,
    *,
    rounds: int = _ROUNDS,
) -> dict[tuple[str, str], str]:
    """(computer, tool) → the unique, valid name it is served under (see module rules)."""
    problem = separator_problem(separator)
    if problem is not None:
        raise ValueError(f"separator {problem}")
    bases: dict[tuple[str, str], str] = {}
    chosen: dict[tuple[str, str], str] = {}
    for computer, tool in pairs:
        name, changed = _plain(computer, tool, separator)
        bases[(computer, tool)] = name
        chosen[(computer, tool)] = _with_digest(name, computer, tool) if changed else name
    # A Computer picks its tools' names: one whose plain name equals another pair's digest
    # name must not take that name from it, nor push it onto a third pair's name. Each
    # round renames only the pairs still sharing a name, with a digest salted anew; a pair
    # is plain at most until its first clash, so this settles within a few rounds.
    for salt in range(1, rounds + 1):
        clashing = _clashing(chosen)
        if not clashing:
            return chosen
        for computer, tool in clashing:
            chosen[(computer, tool)] = _with_digest(bases[(computer, tool)], computer, tool, salt)
    clashing = _clashing(chosen)
    used = {name for pair, name in chosen.items() if pair not in clashing}
    for pair in sorted(clashing):
        number = 1
        while (name := _with_suffix(bases[pair], f"_{number}")) in used:
            number += 1
        chosen[pair] = name
        used.add(name)
    return chosen


def _clashing(chosen: dict[tuple[str, str], str]) -> list[tuple[str, str]]:
    """The pairs whose name another pair has too."""
    count = Counter(chosen.values())
    return [pair for pair, name in chosen.items() if count[name] > 1]


def is_valid_name(name: str) -> bool:
    """True when ``name`` keeps the rules this module builds names by."""
    return 0 < len(name) <= MAX_NAME_LENGTH and all(_ALLOWED.fullmatch(c) for c in name)
