"""a2c_computer: the A2C-SMCP 0.2 Computer role.

Hosts MCP servers (stdio, SSE, Streamable HTTP) and serves their tools, their
``window://`` desktop and their resource lists to an office through an A2C Server::

    from a2c_computer import Computer, load_config

    async with Computer(load_config("computer.json"), name="box-1",
                        server_url="http://127.0.0.1:8000", office_id="office-1") as computer:
        await computer.serve_forever()

Command line: ``a2c-computer run ...`` and ``a2c-computer check --config FILE``.
"""

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
from ._desktop import CallRecord, WindowInfo, describe_window, organize, render_window
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
from ._lint import LintFinding, lint_windows
from ._logging import redacting_filter
from ._mcp import ServerStatus
from ._metrics import ComputerMetrics
from ._registry import build_registry, merge_tool_meta
from ._reloader import ConfigReloader
from ._skills import ArchiveLimits, SkillManager, SkillSettings, default_skill_settings
from ._version import __version__

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
