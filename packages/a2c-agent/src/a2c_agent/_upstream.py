"""The Agent's fence over python-socketio internals: the one module that touches them.

Checked against python-socketio 5.18.1 (the pin's upper bound in pyproject.toml stops there;
``tools/check_latest.sh`` says when a newer release can be let in) and opentelemetry-api
1.45.2 (no upper bound: :func:`tracer_provider_unset` falls back to the public API when the
name is gone). Every name used here is pinned by ``tests/test_agent_upstream_guard.py``;
``tools/check_upstream.py`` (CI) fails when another module of the package reaches an
internal.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI entry imports this fence (tracing) but must not load socketio
    import socketio

__all__ = ["namespace_refused", "tracer_provider_unset"]

_MISSING = object()


def namespace_refused(sio: socketio.AsyncClient) -> bool:
    """Whether the last ``connect`` failed because the Server refused a namespace.

    python-socketio records the refused namespaces in the undocumented ``failed_namespaces``
    list but raises the same ``ConnectionError`` as for a dead host; the Agent needs the
    difference to say "refused" (no retry) rather than "unreachable".
    """
    return bool(getattr(sio, "failed_namespaces", None))


def tracer_provider_unset(trace: ModuleType) -> bool | None:
    """Whether no global tracer provider was set yet; None when that cannot be told.

    ``opentelemetry.trace.get_tracer_provider()`` answers the same question publicly, but
    while nothing is set it looks ``OTEL_PYTHON_TRACER_PROVIDER`` up in ``os.environ`` on
    every call (a failed lookup raises and catches a KeyError): about a third of what the
    Agent added to a tool call (issue 36). The module global it keeps the provider in,
    ``_TRACER_PROVIDER``, tells it for the price of an attribute read.
    """
    provider = getattr(trace, "_TRACER_PROVIDER", _MISSING)
    return None if provider is _MISSING else provider is None
