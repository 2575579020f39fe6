"""The ``call`` command's progress view: a bar on a terminal, lines elsewhere."""

import io

from a2c_agent import ToolCallProgress
from a2c_agent._cli._progress import ToolProgressView


def _report(
    progress: float, total: float | None = None, message: str | None = None
) -> ToolCallProgress:
    return ToolCallProgress(
        agent="a", req_id="r", computer="c", progress=progress, total=total, message=message
    )


def test_a_terminal_gets_one_bar_redrawn_in_place_and_ended_by_finish() -> None:
    out = io.StringIO()
    view = ToolProgressView(out, bar=True, width=10)
    view(_report(1, 4, "a"))
    view(_report(2, 4))
    view.finish()
    text = out.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n")
    assert "[##        ] 1/4 (25.0%) a" in text
    assert "[#####     ] 2/4 (50.0%)" in text


def test_a_log_gets_one_line_per_report_and_no_bar() -> None:
    out = io.StringIO()
    view = ToolProgressView(out, bar=False)
    view(_report(3, None, "working"))
    view.finish()
    assert out.getvalue() == "a2c-agent: progress 3 working\n"
