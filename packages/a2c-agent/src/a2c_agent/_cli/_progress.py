"""The ``call`` command's view of a tool's progress reports, on stderr.

On a terminal a one-line bar in the style of the ``blob`` download bar, redrawn in place;
elsewhere (a log, a pipe) one ``a2c-agent: progress ...`` line per report, so a script can
follow a long call. Reports arrive at most about 10 per second (the Server coalesces).
"""

from __future__ import annotations

from typing import TextIO

from a2c_protocol import ToolCallProgress

from ._visible import visible

__all__ = ["ToolProgressView"]


def progress_text(report: ToolCallProgress) -> str:
    """``3/8 (37.5%) step 3``: what a report says, without a bar."""
    value = f"{report.progress:g}"
    if report.total:
        value += f"/{report.total:g} ({report.progress / report.total * 100:.1f}%)"
    # The MCP server's words, on a line redrawn in place: no control character gets through.
    return f"{value} {visible(report.message, one_line=True)}" if report.message else value


class ToolProgressView:
    """``on_progress`` for the CLI; :meth:`finish` ends a bar that was drawn."""

    def __init__(self, stream: TextIO, *, bar: bool, width: int = 30) -> None:
        self._stream = stream
        self._bar = bar
        self._width = width
        self._drawn = False

    def __call__(self, report: ToolCallProgress) -> None:
        if not self._bar:
            self._stream.write(f"a2c-agent: progress {progress_text(report)}\n")
            self._stream.flush()
            return
        share = min(max(report.progress / report.total, 0.0), 1.0) if report.total else None
        if share is None:
            line = f"\r[{'?' * self._width}] {progress_text(report)}"
        else:
            filled = int(share * self._width)
            line = f"\r[{'#' * filled}{' ' * (self._width - filled)}] {progress_text(report)}"
        self._stream.write(line[:200] + "\x1b[K")
        self._stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False
