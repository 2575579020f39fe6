"""VRL result transformation (computer-config.md §5).

Rules:

* additive: the ``CallToolResult`` is returned untouched; the script's output goes, as a
  JSON string, into ``meta["a2c_vrl_transformed"]``;
* the script's input event is the result's JSON (``content``, ``isError``, ``meta``) plus
  the injected ``tool_name`` and ``parameters``;
* syntax is checked when the configuration is loaded, so a broken script stops the
  Computer at start-up, not at the first call;
* a runtime failure is logged as a WARNING and only leaves the key out.

The runtime is the optional ``vrl-python`` binding (``pip install 'a2c-computer[vrl]'``);
a configuration that uses ``vrl`` without it is refused at load time with that hint.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final

import attrs

from a2c_protocol import CallToolResult, JsonObject, to_wire

__all__ = ["VRL_META_KEY", "VrlProgram", "vrl_problem"]

logger = logging.getLogger("a2c_computer.vrl")

#: ``CallToolResult.meta`` key holding the transformation's output (a JSON string).
VRL_META_KEY: Final = "a2c_vrl_transformed"
_INSTALL_HINT: Final = "VRL needs the optional runtime: pip install 'a2c-computer[vrl]'"


def _runtime_module() -> Any:
    try:
        import vrl_python
    except ImportError:
        return None
    return vrl_python


def vrl_problem(source: str) -> str | None:
    """Why ``source`` cannot be used (runtime missing or a syntax error), or None if it can."""
    module = _runtime_module()
    if module is None:
        return _INSTALL_HINT
    diagnostic = module.VRLRuntime.check_syntax(source)
    if diagnostic is None:
        return None
    messages = "; ".join(diagnostic.messages) or str(diagnostic)
    return f"VRL syntax error: {messages}"


@attrs.define
class VrlProgram:
    """One server's compiled VRL script."""

    source: str
    _runtime: Any = attrs.field(repr=False)

    @classmethod
    def compile(cls, source: str) -> VrlProgram:
        """Compile ``source``; raises ``ValueError`` with the diagnostic when it is unusable."""
        problem = vrl_problem(source)
        if problem is not None:
            raise ValueError(problem)
        runtime = _runtime_module().VRLRuntime()
        runtime.compile(source)
        return cls(source, runtime)

    def event_for(
        self, result: CallToolResult, tool_name: str, parameters: JsonObject
    ) -> JsonObject:
        """The script's input: the result's JSON plus ``tool_name`` and ``parameters``."""
        event: JsonObject = dict(to_wire(result))
        event["tool_name"] = tool_name
        event["parameters"] = parameters
        return event

    def apply(
        self, result: CallToolResult, tool_name: str, parameters: JsonObject
    ) -> CallToolResult:
        """``result`` with ``meta["a2c_vrl_transformed"]`` added (unchanged on failure)."""
        try:
            outcome = self._runtime.execute(
                self.source, self.event_for(result, tool_name, parameters)
            )
            transformed = json.dumps(outcome.processed_event, ensure_ascii=False, default=str)
        except Exception as exc:  # the binding raises several types; none may break the call
            logger.warning("VRL transformation of %r failed: %s", tool_name, exc)
            return result
        return attrs.evolve(result, meta={**(result.meta or {}), VRL_META_KEY: transformed})
