"""Which file of a staged skill package a ``client:get_skill`` may read.

Rules (spec delta §4.9 step 4, §4.11), in this order:

1. Lexically, before the file system is touched: an absolute path, a ``..`` segment, a
   backslash or a NUL → ``traversal``; any segment naming a sensitive file (``.skillenv``,
   compared case-insensitively) → ``forbidden``, whether or not it exists.
2. Joined with the package root and resolved (symlinks followed): a target outside the
   root → ``traversal``; a target whose real name is sensitive → ``forbidden``.
3. A target that is missing or not a regular file → ``not_found``.

The package root comes only from the registry, never from the request.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Final

import attrs

from a2c_protocol import SkillResourceReason

__all__ = ["SENSITIVE_NAMES", "SkillFileProblem", "resolve_skill_file"]

#: File names never served, under any path (lower case).
SENSITIVE_NAMES: Final = frozenset({".skillenv"})


@attrs.frozen
class SkillFileProblem:
    """Why a ``rel_path`` cannot be served: the 4017 reason and a message for the peer."""

    reason: SkillResourceReason
    message: str


def _lexical_problem(rel_path: str) -> SkillFileProblem | None:
    if not rel_path or "\x00" in rel_path or "\\" in rel_path:
        return SkillFileProblem(SkillResourceReason.TRAVERSAL, "rel_path is not a relative path")
    pure = PurePosixPath(rel_path)
    if pure.is_absolute() or rel_path.startswith("/"):
        return SkillFileProblem(SkillResourceReason.TRAVERSAL, "rel_path must be relative")
    if ".." in pure.parts:
        return SkillFileProblem(SkillResourceReason.TRAVERSAL, "rel_path must not contain '..'")
    if any(part.lower() in SENSITIVE_NAMES for part in pure.parts):
        return SkillFileProblem(SkillResourceReason.FORBIDDEN, "this file is never served")
    return None


def resolve_skill_file(root: Path, rel_path: str) -> Path | SkillFileProblem:
    """The real path of ``rel_path`` inside the package ``root``, or why it cannot be served."""
    problem = _lexical_problem(rel_path)
    if problem is not None:
        return problem
    real_root = root.resolve()
    target = (real_root / rel_path).resolve()
    if target != real_root and real_root not in target.parents:
        return SkillFileProblem(SkillResourceReason.TRAVERSAL, "rel_path leaves the skill package")
    if target.name.lower() in SENSITIVE_NAMES:
        return SkillFileProblem(SkillResourceReason.FORBIDDEN, "this file is never served")
    if not target.is_file():
        return SkillFileProblem(
            SkillResourceReason.NOT_FOUND, f"no file {rel_path!r} in this skill"
        )
    return target
