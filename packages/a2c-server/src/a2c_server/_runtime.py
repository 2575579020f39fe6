"""Which event loop and HTTP parser uvicorn will run the Server on.

uvicorn's ``loop="auto"`` and ``http="auto"`` pick uvloop and httptools when they import,
and silently fall back to asyncio and h11 otherwise. The fast pair is most of the
difference between a relayed call's cost and the bare Socket.IO floor, so the start line
says which one is in use instead of leaving operators to guess.
"""

from __future__ import annotations

import importlib.util

import attrs

__all__ = ["RuntimeStack", "runtime_stack"]


@attrs.frozen
class RuntimeStack:
    """The event loop and HTTP/1.1 parser uvicorn's ``auto`` settings resolve to."""

    loop: str
    http: str

    @property
    def fast(self) -> bool:
        """True when both the fast loop and the fast parser are available."""
        return self.loop == "uvloop" and self.http == "httptools"

    def describe(self) -> str:
        """``"uvloop + httptools"``, or the fallback with a hint."""
        text = f"{self.loop} + {self.http}"
        return text if self.fast else f"{text} (install uvloop and httptools for speed)"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def runtime_stack() -> RuntimeStack:
    """What ``uvicorn.run(loop="auto", http="auto")`` will use on this interpreter."""
    return RuntimeStack(
        loop="uvloop" if _importable("uvloop") else "asyncio",
        http="httptools" if _importable("httptools") else "h11",
    )
