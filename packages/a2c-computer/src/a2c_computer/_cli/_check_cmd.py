"""``a2c-computer check``: start the configured MCP servers locally and report on them.

Rules:

* every server is listed with its status; a ready one with every tool it has — tools that
  lost a name clash are shown as hidden, never as ``tools (0)``;
* each clash is printed once per pair of servers, with the fix (a ``tool_prefix``; for an
  mcpServers file, which cannot hold one, how to convert it first);
* windows are linted against v0.2 only for the servers that answered; the servers that
  did not are named as not checked, so "conformant" never covers what was not seen;
* the skills the servers publish are staged into a throw-away directory and each refused
  package is reported with why (the user folder is not part of ``check``);
* without a terminal, the tools ``run --confirm ask`` (the default) would refuse with 4005
  are named once, with how to allow them (informational, no exit status);
* the landing dir of uploads is reported (off, or where and how much);
* a ready server names the MCP protocol version it speaks and its era (handshake:
  2025-11-25 and earlier; modern: 2026-07-28), which ``mcp_era`` in its entry can pin;
* a server whose 0.4 bundle_id or display name differs from its key says so (0.4 sessions
  name it by that bundle_id); a bad or duplicate bundle_id fails the load (exit 2);
* exit 1 when a server failed, a clash hides tools, a window is non-conformant, a
  published skill is refused, or a landing dir is given but unusable.
"""

from __future__ import annotations

from typing import Any

from a2c_computer._bundles import Bundles
from a2c_computer._computer import ComputerCore
from a2c_computer._desk._lint import lint_windows
from a2c_computer._landing import LandingSettings, describe_landing
from a2c_computer._mcp import ServerStatus, era_of
from a2c_computer._registry import clash_advice
from a2c_computer._skills import default_skill_settings
from a2c_computer._toolcalls._confirm import ALLOW_HINT, needs_confirmation
from a2c_protocol import (
    ComputerConfig,
    InvalidPayloadError,
    MCPServerConfig,
    SMCPTool,
    tool_meta_of,
)

from ._skills_cmd import print_skill_report, stage_with

__all__ = ["run_check"]


async def run_check(
    config: ComputerConfig,
    *,
    timeout: float,
    interactive: bool,
    convert_hint: str | None = None,
    landing: LandingSettings | None = None,
) -> int:
    """Print the report on stdout; returns the exit status.

    ``convert_hint``: said after the clash advice when the file cannot take its fix (an
    mcpServers file has no ``tool_prefix``).
    """
    core = ComputerCore(config, restart=False, start_timeout=timeout, interactive=interactive)
    problems = False
    unchecked: list[str] = []
    resources: dict[str, list[dict[str, Any]]] = {}
    async with core:
        states = core.server_states()
        clashes = core.clashes()
        bundles = Bundles.of(config)
        for name in sorted(states):
            state = states[name]
            print(
                f"MCP server {name}: {state.status}"
                + (f" — {state.last_error}" if state.last_error else "")
                + _bundle_note(name, config.servers[name], bundles.bundle(name))
                + _era_note(state.status, state.protocol)
            )
            server = core.server(name)
            if state.status == ServerStatus.DISABLED.value:
                continue
            if server is None or server.status is not ServerStatus.READY:
                problems = True
                unchecked.append(name)
                continue
            own = [t.name for t in core.tools() if core.tool_server(t.name) == name]
            hidden = [c.name for c in clashes if c.lost == name]
            task_only = sorted(t for t, s in core.task_only_tools().items() if s == name)
            count = len(own) + len(hidden) + len(task_only)
            line = f"  tools ({count}): {', '.join(own) or '-'}"
            if hidden:
                line += f"; hidden by name clashes (see below): {', '.join(hidden)}"
            if task_only:
                line += (
                    f"; not offered, they can only run as MCP tasks (execution.taskSupport: "
                    f"required), which a2c-computer does not support: {', '.join(task_only)}"
                )
            print(line)
            if not server.has_resources:
                print("  no resources capability")
                continue
            try:
                listed = await server.list_all("resources/list", "resources")
            except Exception as exc:
                print(f"  resources/list failed: {exc}")
                problems = True
                unchecked.append(name)
                continue
            resources[name] = listed
            windows = [
                r.get("uri") for r in listed if str(r.get("uri", "")).startswith("window://")
            ]
            print(f"  windows ({len(windows)}): {', '.join(map(str, windows)) or '-'}")
            if windows and not server.can_subscribe:
                print(
                    "  ! resources.subscribe is not declared: the Computer will not show "
                    "these windows"
                )
                problems = True
        unconfirmed = [] if interactive else [t.name for t in core.tools() if _asks(t)]
        advice = clash_advice(clashes, config.servers)
        skills = await stage_with(core, default_skill_settings("check"), user_folder=False)
    if advice:
        problems = True
        print(f"\n{len(clashes)} tool name clash(es):")
        for line in advice:
            print(f"  {line}")
        if convert_hint is not None:
            print(f"  Note: {convert_hint}.")
    if unconfirmed:
        print(
            f"\nno terminal here: `run --confirm ask` (the default) refuses (4005) the "
            f"{len(unconfirmed)} tool(s) without auto_apply: true: {', '.join(unconfirmed)}; "
            f"{ALLOW_HINT}"
        )
    findings = lint_windows(resources)
    if findings:
        print(f"\n{len(findings)} v0.2 conformance problem(s):")
        for finding in findings:
            print(f"  {finding}")
    elif resources:
        print(f"\nwindows: v0.2 conformant ({', '.join(sorted(resources))})")
    if unchecked:
        print(f"windows: NOT checked for {', '.join(unchecked)} (see the errors above)")
    elif not resources:
        print("\nwindows: none to check (no ready server lists resources)")
    print()
    if print_skill_report(skills):
        problems = True
    line, bad = describe_landing(landing or LandingSettings())
    print(line)
    if bad:
        problems = True
    return 1 if problems or findings else 0


def _asks(tool: SMCPTool) -> bool:
    """Whether calling ``tool`` needs a confirmation (its merged auto_apply is not true)."""
    try:
        meta = tool_meta_of(tool)
    except InvalidPayloadError:
        return True
    return needs_confirmation(meta)


def _bundle_note(key: str, server: MCPServerConfig, bundle: str) -> str:
    """`` (0.4 bundle_id b, name n)``: what a 0.4 session calls the server, when not its key."""
    parts = [f"0.4 bundle_id {bundle}"] if bundle != key else []
    if server.name != key:
        parts.append(f"name {server.name!r}")
    return f" ({', '.join(parts)})" if parts else ""


def _era_note(status: str, protocol: str | None) -> str:
    if status != ServerStatus.READY.value or not protocol:
        return ""
    return f" (MCP {protocol}, {era_of(protocol)} era)"
