"""The Computer as a skill manager (protocol 0.2.1–0.2.3): pure rules here, I/O at the edges.

Private package: the public surface is re-exported from :mod:`a2c_computer`.
"""

from ._archive import ArchiveError, ArchiveLimits, unpack_archive
from ._catalog import USER_ORIGIN, Skill, SkillCatalog
from ._frontmatter import SkillFrontmatter, parse_skill_md, split_frontmatter
from ._manager import SkillManager
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
from ._serve import serve_get_skill, serve_get_skills
from ._settings import SkillSettings, default_skill_settings
from ._stage import SkillRoot, StagingError, read_package, scan_user_folder, skill_roots

__all__ = [
    "MCP_PREFIX",
    "SENSITIVE_NAMES",
    "USER_ORIGIN",
    "USER_SOURCE",
    "ArchiveError",
    "ArchiveLimits",
    "Skill",
    "SkillCatalog",
    "SkillFileProblem",
    "SkillFrontmatter",
    "SkillManager",
    "SkillRoot",
    "SkillSettings",
    "StagingError",
    "default_skill_settings",
    "is_kebab",
    "lex_skill_name",
    "mcp_skill_name",
    "mcp_source",
    "normalize_server_segment",
    "parse_skill_md",
    "read_package",
    "resolve_skill_file",
    "scan_user_folder",
    "serve_get_skill",
    "serve_get_skills",
    "server_segment_problem",
    "skill_roots",
    "split_frontmatter",
    "unpack_archive",
]
