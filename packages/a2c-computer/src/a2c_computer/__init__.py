"""a2c_computer: the A2C-SMCP 0.2 Computer role.

Hosts MCP servers (stdio, SSE, Streamable HTTP) and serves their tools, their
``window://`` desktop and their resource lists to an office through an A2C Server::

    from a2c_computer import Computer, load_config

    async with Computer(load_config("computer.json"), name="box-1",
                        server_url="http://127.0.0.1:8000", office_id="office-1") as computer:
        await computer.serve_forever()

Command line: ``a2c-computer run ...`` and ``a2c-computer check --config FILE``.
"""

# The public names load on first use (PEP 562): ``a2c-computer --help``, ``config convert``
# and ``check`` import only the modules they need, not python-socketio, redis and the
# Computer (about a second of CPU per command). Type checkers read the imports below.
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from ._app import Computer
    from ._auth import classify_upstream_failure, sanitize_auth_hint
    from ._blobs import (
        BlobChunk,
        BlobInfo,
        BlobResolver,
        BlobSettings,
        BlobSource,
        BlobStore,
        SpoolUsage,
    )
    from ._computer import ConfirmCallback, ConfirmRequest, ServerState
    from ._config import InputResolver, ReloadPlan, env_var_names, load_config, plan_reload
    from ._desk._desktop import CallRecord, WindowInfo, describe_window, organize, render_window
    from ._desk._lint import LintFinding, lint_windows
    from ._exceptions import (
        BlobError,
        BlobTooLargeError,
        BlobUnavailableError,
        ComputerError,
        ComputerStateError,
        ConfigError,
        InputResolutionError,
        LinkError,
        ServerRefusedError,
    )
    from ._landing import LandingSettings
    from ._mcp import ServerStatus
    from ._observe._logging import redacting_filter
    from ._observe._metrics import ComputerMetrics
    from ._registry import build_registry, merge_tool_meta
    from ._reloader import ConfigReloader
    from ._skills import ArchiveLimits, SkillManager, SkillSettings, default_skill_settings

__all__ = [
    "ArchiveLimits",
    "BlobChunk",
    "BlobError",
    "BlobInfo",
    "BlobResolver",
    "BlobSettings",
    "BlobSource",
    "BlobStore",
    "BlobTooLargeError",
    "BlobUnavailableError",
    "CallRecord",
    "Computer",
    "ComputerError",
    "ComputerMetrics",
    "ComputerStateError",
    "ConfigError",
    "ConfigReloader",
    "ConfirmCallback",
    "ConfirmRequest",
    "InputResolutionError",
    "InputResolver",
    "LandingSettings",
    "LinkError",
    "LintFinding",
    "ReloadPlan",
    "ServerRefusedError",
    "ServerState",
    "ServerStatus",
    "SkillManager",
    "SkillSettings",
    "SpoolUsage",
    "WindowInfo",
    "__version__",
    "build_registry",
    "classify_upstream_failure",
    "default_skill_settings",
    "describe_window",
    "env_var_names",
    "lint_windows",
    "load_config",
    "merge_tool_meta",
    "organize",
    "plan_reload",
    "redacting_filter",
    "render_window",
    "sanitize_auth_hint",
]

#: Public name -> the module that defines it.
_LAZY: dict[str, str] = {
    "Computer": "._app",
    "classify_upstream_failure": "._auth",
    "sanitize_auth_hint": "._auth",
    "BlobChunk": "._blobs",
    "BlobInfo": "._blobs",
    "BlobResolver": "._blobs",
    "BlobSettings": "._blobs",
    "BlobSource": "._blobs",
    "BlobStore": "._blobs",
    "SpoolUsage": "._blobs",
    "ConfirmCallback": "._computer",
    "ConfirmRequest": "._computer",
    "ServerState": "._computer",
    "load_config": "._config",
    "CallRecord": "._desk._desktop",
    "WindowInfo": "._desk._desktop",
    "describe_window": "._desk._desktop",
    "organize": "._desk._desktop",
    "render_window": "._desk._desktop",
    "BlobError": "._exceptions",
    "BlobTooLargeError": "._exceptions",
    "BlobUnavailableError": "._exceptions",
    "ComputerError": "._exceptions",
    "ComputerStateError": "._exceptions",
    "ConfigError": "._exceptions",
    "InputResolutionError": "._exceptions",
    "LinkError": "._exceptions",
    "ServerRefusedError": "._exceptions",
    "InputResolver": "._config",
    "env_var_names": "._config",
    "LandingSettings": "._landing",
    "LintFinding": "._desk._lint",
    "lint_windows": "._desk._lint",
    "redacting_filter": "._observe._logging",
    "ServerStatus": "._mcp",
    "ComputerMetrics": "._observe._metrics",
    "build_registry": "._registry",
    "merge_tool_meta": "._registry",
    "ReloadPlan": "._config",
    "plan_reload": "._config",
    "ConfigReloader": "._reloader",
    "ArchiveLimits": "._skills",
    "SkillManager": "._skills",
    "SkillSettings": "._skills",
    "default_skill_settings": "._skills",
}


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
