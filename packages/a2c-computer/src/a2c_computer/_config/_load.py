"""Loading and validating a Computer configuration file (computer-config.md).

Rules:

* the document has the shape ``{"inputs": [...], "servers": {name: MCPServerConfig}}``;
  unknown keys anywhere are errors, every error names its JSON path;
* a server's key is its ``name``, or its ``bundle_id`` when it has one (0.4 rule: ``A-Z a-z
  0-9 _ -``, no ``__``); no two servers have the same bundle_id, explicit or derived from
  the name (``_bundles``); Streamable timeouts are ISO 8601 durations;
* a ``{"mcpServers": ...}`` document (other MCP hosts' shape) is converted (_foreign.py);
  an unknown key's error suggests the nearest known key;
* a ``vrl`` script must compile (and its optional runtime be installed): VRL problems
  surface at start-up rather than at the first call.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from a2c_computer._asks._roots import root_problem
from a2c_computer._bundles import duplicate_bundle_ids
from a2c_computer._exceptions import ConfigError
from a2c_computer._toolcalls._vrl import vrl_problem
from a2c_protocol import ComputerConfig, FieldError, InvalidPayloadError, config_from_json, to_wire

from ._foreign import CONFIG_KEYS, convert_mcp_servers, did_you_mean, is_mcp_servers_document

__all__ = ["config_to_json", "load_config"]

logger = logging.getLogger("a2c_computer")


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | ComputerConfig,
) -> ComputerConfig:
    """Load and validate a configuration from a JSON file path, a dict, or a parsed config.

    Raises :class:`ConfigError` listing every problem with its JSON path.
    """
    if isinstance(source, ComputerConfig):
        data: Any = to_wire(source)
        label = "config"
    elif isinstance(source, Mapping):
        data = dict(source)
        label = "config"
    else:
        path = Path(source)
        label = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read config file {label}: {exc}") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"config file {label} is not valid JSON: {exc}") from exc
    if is_mcp_servers_document(data):
        data, problems = convert_mcp_servers(data)
        if problems:
            details = "; ".join(f"{e.path}: {e.problem}" for e in problems)
            raise ConfigError(
                f"invalid configuration {label}: it has the mcpServers shape of other MCP "
                f"hosts, which is converted to ours (see computer.md), but: {details}",
                problems,
            )
        logger.info(
            "config %s: converted the mcpServers shape of other MCP hosts to %d server(s); "
            "their tools need confirmation until auto_apply is set ('a2c-computer config "
            "convert' writes the file in this Computer's format, where it can be)",
            label,
            len(data["servers"]),
        )
    try:
        config = config_from_json(data)
    except InvalidPayloadError as exc:
        errors = [_with_suggestion(e) for e in exc.errors]
        details = "; ".join(f"{e.path}: {e.problem}" for e in errors)
        raise ConfigError(f"invalid configuration {label}: {details}", errors) from exc
    errors = (
        duplicate_bundle_ids(config)
        + [
            FieldError(f"$.servers[{name!r}].vrl", problem)
            for name, server in config.servers.items()
            if server.vrl is not None and (problem := vrl_problem(server.vrl)) is not None
        ]
        + [
            FieldError(f"$.servers[{name!r}].roots[{index}]", problem)
            for name, server in config.servers.items()
            for index, root in enumerate(server.roots or [])
            if (problem := root_problem(root)) is not None
        ]
    )
    if errors:
        details = "; ".join(f"{e.path}: {e.problem}" for e in errors)
        raise ConfigError(f"invalid configuration {label}: {details}", errors)
    return config


def _with_suggestion(error: FieldError) -> FieldError:
    if error.problem != "unknown key":
        return error
    key = error.path.rsplit(".", 1)[-1]
    hint = did_you_mean(key, CONFIG_KEYS)
    if key == "mcpServers":
        hint = "; next to 'servers' it is not converted: move its entries into 'servers'"
    return FieldError(error.path, error.problem + hint) if hint else error


def config_to_json(config: ComputerConfig) -> dict[str, Any]:
    """The configuration as authored (placeholders unresolved), fully populated."""
    data: dict[str, Any] = to_wire(config)
    return data
