"""Where a Computer's skills live and how big they may be (:class:`SkillSettings`).

Separate from the manager because the CLI builds these settings (``--skills-*`` options,
``check``, ``skills``) without starting a manager, and the file server reads its limits.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import attrs

from a2c_computer._workdirs import per_process_name

from ._archive import ArchiveLimits

__all__ = ["SkillSettings", "default_data_root", "default_skill_settings"]


@attrs.frozen(kw_only=True)
class SkillSettings:
    """Where skills live and how big they may be."""

    #: Private directory MCP skills are staged into (created 0700).
    install_dir: Path
    #: The user's own skill packages (each a directory with a SKILL.md); None: no folder.
    user_dir: Path | None = None
    #: How often the user folder is re-scanned, in seconds.
    poll_interval: float = 2.0
    #: Text files up to this many bytes are answered inline.
    inline_budget: int = 32 * 1024
    #: Files above this many bytes are refused (4017 too_large).
    max_file_bytes: int = 100 * 1024 * 1024
    #: Bounds for one staged package (archive members / bytes, download size).
    limits: ArchiveLimits = ArchiveLimits()
    #: Changes within this window are announced once.
    debounce: float = 0.3
    #: ``install_dir`` is this process's own (``<name>-<pid>-<random>``): directories that
    #: dead Computers left next to it are removed at start.
    per_process: bool = False


def default_data_root() -> Path:
    """The user's data directory (XDG on Linux, Application Support on macOS, APPDATA)."""
    if sys.platform == "win32":
        base = os.environ.get("APPDATA")
        return Path(base) if base else Path.home() / "AppData" / "Roaming"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    base = os.environ.get("XDG_DATA_HOME")
    return Path(base) if base else Path.home() / ".local" / "share"


def default_skill_settings(computer_name: str) -> SkillSettings:
    """Skills under the user's data directory: ``a2c-computer/skills/user`` is the user
    folder (shared by the user's Computers), ``a2c-computer/skills/staged/<name>-<pid>-<random>``
    holds what this Computer process staged from its MCP servers (removed when it stops)."""
    base = default_data_root() / "a2c-computer" / "skills"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in computer_name) or "_"
    return SkillSettings(
        install_dir=base / "staged" / per_process_name(safe),
        user_dir=base / "user",
        per_process=True,
    )
