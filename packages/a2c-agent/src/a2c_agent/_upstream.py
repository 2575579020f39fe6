"""The Agent's fence over python-socketio internals: the one module that touches them.

Checked against python-socketio 5.18.1 (the pin's upper bound in pyproject.toml stops there;
``tools/check_latest.sh`` says when a newer release can be let in). Every name used here is
pinned by ``tests/test_agent_upstream_guard.py``; ``tools/check_upstream.py`` (CI) fails when
another module of the package reaches an internal.
"""

from __future__ import annotations

import socketio

__all__ = ["namespace_refused"]


def namespace_refused(sio: socketio.AsyncClient) -> bool:
    """Whether the last ``connect`` failed because the Server refused a namespace.

    python-socketio records the refused namespaces in the undocumented ``failed_namespaces``
    list but raises the same ``ConnectionError`` as for a dead host; the Agent needs the
    difference to say "refused" (no retry) rather than "unreachable".
    """
    return bool(getattr(sio, "failed_namespaces", None))
