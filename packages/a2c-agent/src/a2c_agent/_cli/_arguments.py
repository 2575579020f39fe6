"""``a2c-agent call`` without a JSON argument: what the tool's input schema says about it.

Rules:

* the JSON argument is optional: left out, the tool is called with ``{}``;
* left out for a tool whose input schema lists ``required`` properties, nothing is called:
  the command says which arguments the schema requires and how to pass them (a usage
  error, exit 2), rather than sending ``{}`` for the tool to refuse in its own words;
* a tool the Computer does not list is called anyway: the Computer's answer says it is not
  found and suggests a near name;
* the schema is read only when the argument was left out (one ``client:get_tools``); a call
  that gives it costs what it always did.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from a2c_agent._types import AgentTool

__all__ = ["missing_arguments_problem", "required_arguments"]


def required_arguments(schema: Mapping[str, Any] | None) -> list[str]:
    """The property names an input schema's top-level ``required`` lists (strings only)."""
    required = (schema or {}).get("required")
    if not isinstance(required, list):
        return []
    return [name for name in required if isinstance(name, str)]


def missing_arguments_problem(computer: str, tool: str, tools: Iterable[AgentTool]) -> str | None:
    """Why calling ``tool`` with no arguments cannot work, or None (unknown tools included)."""
    found = next((t for t in tools if t.name == tool), None)
    names = required_arguments(found.params_schema) if found is not None else []
    if not names:
        return None
    listed = ", ".join(names)
    example = json.dumps(dict.fromkeys(names, "..."), ensure_ascii=False)
    return (
        f"tool {tool!r} of {computer!r} needs arguments: its input schema requires "
        f"{listed}; pass them as a JSON object, e.g. a2c-agent call {computer} {tool} "
        f"'{example}' ('a2c-agent tools {computer} --json' shows the schema)"
    )
