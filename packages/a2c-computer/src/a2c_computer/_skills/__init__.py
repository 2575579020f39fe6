"""The Computer as a skill manager (protocol 0.2.1–0.2.3): pure rules here, I/O at the edges.

Private package: the public surface is re-exported from :mod:`a2c_computer`.
"""

from ._archive import ArchiveError, ArchiveLimits, unpack_archive
from ._frontmatter import SkillFrontmatter, parse_skill_md, split_frontmatter
from ._names import (
    MCP_PREFIX,
    USER_SOURCE,
    is_kebab,
    lex_skill_name,
    mcp_skill_name,
    mcp_source,
    normalize_server_segment,
    server_segment_problem,
)
from ._sandbox import SENSITIVE_NAMES, SkillFileProblem, resolve_skill_file

__all__ = [
    "MCP_PREFIX",
    "SENSITIVE_NAMES",
    "USER_SOURCE",
    "ArchiveError",
    "ArchiveLimits",
    "SkillFileProblem",
    "SkillFrontmatter",
    "is_kebab",
    "lex_skill_name",
    "mcp_skill_name",
    "mcp_source",
    "normalize_server_segment",
    "parse_skill_md",
    "resolve_skill_file",
    "server_segment_problem",
    "split_frontmatter",
    "unpack_archive",
]
