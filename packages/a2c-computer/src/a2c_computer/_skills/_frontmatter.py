"""``SKILL.md``: its YAML frontmatter (the skill's metadata) and its served body.

Rules (spec delta §4.7, §4.8):

- The frontmatter block runs from a first line that is exactly ``---`` to the next line
  that is exactly ``---`` (both removed). Without both fences there is no frontmatter and
  the whole file is the body. The body keeps its bytes and line endings as they are.
- The frontmatter must be a YAML mapping with a ``name`` (strict kebab) and a
  ``description`` (non-empty string). ``license`` and ``compatibility`` are strings;
  ``allowed-tools`` is a list of strings or one string (split on commas and white
  space); ``metadata`` is a mapping passed through; ``version`` is a string, or a number
  taken as written in YAML (``1.2`` → ``"1.2"``), else ``metadata.version``. Anything else
  is ignored.
- A skill whose frontmatter breaks these rules is not registered (the caller logs why).
"""

from __future__ import annotations

import re
from typing import Any, Final

import attrs
import yaml

from ._names import is_kebab

__all__ = ["SkillFrontmatter", "parse_skill_md", "split_frontmatter"]

_FENCE: Final = re.compile(rb"---[ \t]*\r?\n?")


@attrs.frozen
class SkillFrontmatter:
    """The metadata a ``SKILL.md`` declares."""

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    metadata: dict[str, Any] | None = None
    version: str | None = None


def split_frontmatter(data: bytes) -> tuple[bytes | None, bytes]:
    """``(frontmatter, body)``: the YAML between the fences (None if absent) and the rest."""
    lines = data.splitlines(keepends=True)
    if not lines or not _FENCE.fullmatch(lines[0]):
        return None, data
    offset = len(lines[0])
    for line in lines[1:]:
        if _FENCE.fullmatch(line):
            return data[len(lines[0]) : offset], data[offset + len(line) :]
        offset += len(line)
    return None, data


def parse_skill_md(data: bytes) -> tuple[SkillFrontmatter, bytes]:
    """The frontmatter and served body of a ``SKILL.md``; ``ValueError`` saying what is wrong."""
    raw, body = split_frontmatter(data)
    if raw is None:
        raise ValueError("SKILL.md has no YAML frontmatter (a '---' block at the top)")
    try:
        document = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"SKILL.md frontmatter is not UTF-8: {exc}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"SKILL.md frontmatter is not valid YAML: {_first_line(exc)}") from None
    if not isinstance(document, dict):
        raise ValueError("SKILL.md frontmatter must be a YAML mapping")
    name = document.get("name")
    if not isinstance(name, str) or not is_kebab(name):
        raise ValueError(
            f"frontmatter 'name' must be strict kebab case (1-64 of [a-z0-9-]), got {name!r}"
        )
    description = document.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("frontmatter 'description' must be a non-empty string")
    metadata = document.get("metadata")
    return (
        SkillFrontmatter(
            name=name,
            description=description.strip(),
            license=_optional_str(document, "license"),
            compatibility=_optional_str(document, "compatibility"),
            allowed_tools=_allowed_tools(document.get("allowed-tools")),
            metadata=metadata if isinstance(metadata, dict) else None,
            version=_version(document, metadata),
        ),
        body,
    )


def _optional_str(document: dict[str, Any], key: str) -> str | None:
    value = document.get(key)
    return value if isinstance(value, str) else None


def _version(document: dict[str, Any], metadata: object) -> str | None:
    for value in (
        document.get("version"),
        (metadata or {}).get("version") if isinstance(metadata, dict) else None,
    ):
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
    return None


def _allowed_tools(value: object) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return tuple(part for part in re.split(r"[,\s]+", value) if part)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
