"""Configuration: reading, validating, showing and comparing a Computer's configuration.

The room holds the loading and validation of a configuration file (``_load.py``:
``load_config``), the conversion of other MCP hosts' ``mcpServers`` shape and the "did you
mean" for names (``_foreign.py``), ``${input:...}`` placeholders and their resolution
(``_inputs.py``: ``InputResolver``), what ``client:get_config`` shows an Agent, secrets
masked (``_view.py``), and the pure reload plan computed from two configurations
(``_reload.py``: ``plan_reload``). Nothing here runs an MCP server: the Computer applies a
configuration (``_computer.py``), ``_reloader.py`` decides when to re-read the file. Other
modules import from here, not from the files inside.
"""

from ._foreign import convert_mcp_servers, did_you_mean, is_mcp_servers_document
from ._inputs import InputResolver, PromptFn, env_var_names
from ._load import load_config
from ._reload import ReloadPlan, plan_reload
from ._view import agent_view, safe_error, states_view

__all__ = [
    "InputResolver",
    "PromptFn",
    "ReloadPlan",
    "agent_view",
    "convert_mcp_servers",
    "did_you_mean",
    "env_var_names",
    "is_mcp_servers_document",
    "load_config",
    "plan_reload",
    "safe_error",
    "states_view",
]
