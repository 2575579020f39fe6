"""What the namespace tells the console while someone watches (and nothing otherwise).

The namespace holds an ``observer`` attribute that is ``None`` while nobody has the console
open, so a relayed call costs one attribute check; the console sets it when its first
viewer subscribes and clears it when the last one leaves.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Protocol

__all__ = ["CallObserver"]


class CallObserver(Protocol):
    def watch_call(
        self, event: str, req: Any, office: str | None, call: Coroutine[Any, Any, Any]
    ) -> Coroutine[Any, Any, Any]:
        """Wrap a relayed ``client:*`` request's coroutine; the wrapper returns its answer."""
        ...

    def office_event(self, office: str, event: str, payload: Any) -> None:
        """A ``notify:*`` the Server just sent to ``office``."""
        ...
