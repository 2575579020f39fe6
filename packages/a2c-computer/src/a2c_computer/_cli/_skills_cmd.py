"""``a2c-computer skills`` and the skills part of ``check``: stage what the configured MCP
servers publish (and the user folder) locally, and say what an Agent would be offered.

Rules:

* MCP servers are started locally (no Server, no office); their skills are staged into a
  throw-away directory, so listing never touches the Computer's real install location;
* every offered skill is printed with name, source, version and description (``-`` when
  missing), in discovery order; every refused package with the reason the Computer logs;
* MCP servers that did not start are named: their skills were not seen, so "no refusals"
  never covers them;
* exit 1 when a package was refused or a server with skills could not be checked.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import attrs

from a2c_computer._computer import ComputerCore
from a2c_computer._mcp import ServerStatus
from a2c_computer._skills import USER_ORIGIN, SkillManager, SkillSettings
from a2c_protocol import A2CSkillRef, ComputerConfig

__all__ = ["SkillReport", "collect_skills", "print_skill_report", "run_skills"]


@attrs.frozen
class SkillReport:
    """What a Computer with this configuration would offer, and what it would refuse."""

    skills: tuple[A2CSkillRef, ...]
    #: source label (``user folder`` or ``MCP server <name>``) → refusal messages.
    refusals: dict[str, tuple[str, ...]]
    #: MCP servers that were not ready (their skills were not seen).
    unchecked: tuple[str, ...]


async def stage_with(
    core: ComputerCore, settings: SkillSettings, *, user_folder: bool
) -> SkillReport:
    """Stage the skills of ``core``'s ready servers (and the user folder) with a fresh manager
    installing into a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="a2c-skills-") as scratch:
        staged = attrs.evolve(
            settings,
            install_dir=Path(scratch) / "staged",
            user_dir=settings.user_dir if user_folder else None,
        )
        manager = SkillManager(staged)
        await manager.start()
        try:
            unchecked = []
            for name, state in sorted(core.server_states().items()):
                server = core.server(name)
                if state.status == ServerStatus.DISABLED.value:
                    continue
                if server is None or server.status is not ServerStatus.READY:
                    unchecked.append(name)
                    continue
                await manager.server_ready(server)
            refusals = {
                ("user folder" if origin == USER_ORIGIN else f"MCP server {origin}"): found
                for origin, found in manager.refusals().items()
            }
            return SkillReport(tuple(manager.skills()), refusals, tuple(unchecked))
        finally:
            await manager.stop()


async def collect_skills(
    config: ComputerConfig,
    settings: SkillSettings,
    *,
    timeout: float,
    interactive: bool,
    user_folder: bool = True,
) -> SkillReport:
    """Start ``config``'s MCP servers locally and stage their skills (see module rules)."""
    core = ComputerCore(config, restart=False, start_timeout=timeout, interactive=interactive)
    async with core:
        return await stage_with(core, settings, user_folder=user_folder)


def _cell(value: str | None) -> str:
    return " ".join(value.split()) if value else "-"


def print_skill_report(report: SkillReport) -> bool:
    """Print the report; say whether it holds a problem."""
    print(f"skills offered ({len(report.skills)}):")
    rows = [(s.name, s.source, _cell(s.version), _cell(s.description)) for s in report.skills]
    if rows:
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        for row in rows:
            cells = "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True))
            print(f"  {cells}  {row[3]}")
    else:
        print("  -")
    for source, found in report.refusals.items():
        print(f"refused by the Computer ({source}):")
        for message in found:
            print(f"  ! {message}")
    if report.unchecked:
        print(f"skills NOT checked for {', '.join(report.unchecked)} (the server is not ready)")
    return bool(report.refusals or report.unchecked)


async def run_skills(
    config: ComputerConfig, settings: SkillSettings, *, timeout: float, interactive: bool
) -> int:
    """``a2c-computer skills``: print the report; returns the exit status."""
    report = await collect_skills(config, settings, timeout=timeout, interactive=interactive)
    return 1 if print_skill_report(report) else 0
