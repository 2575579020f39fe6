"""The progress extension in the core: the coalescing rule and the opt-in wire fields."""

from a2c_protocol import (
    PROGRESS_MIN_INTERVAL,
    ProgressGate,
    ToolCallProgress,
    ToolCallReq,
    from_wire,
    to_wire,
)


def test_the_gate_passes_at_most_one_report_per_interval_and_keeps_the_latest() -> None:
    gate: ProgressGate[int] = ProgressGate(0.1)
    assert gate.offer(1, 0.0)
    assert not gate.offer(2, 0.03)
    assert not gate.offer(3, 0.06)  # replaces 2: only the latest matters
    assert gate.due() == 0.1
    assert gate.take(0.09) is None  # not due yet
    assert gate.take(0.1) == 3
    assert gate.take(0.5) is None  # taken once
    assert not gate.offer(4, 0.15)  # 0.05 after the flushed report
    assert gate.offer(5, 0.21)  # a full interval later passes at once, dropping 4
    assert gate.due() is None


def test_ten_per_second_is_the_default() -> None:
    gate: ProgressGate[int] = ProgressGate()
    passed = [i for i in range(100) if gate.offer(i, i * 0.01)]
    assert PROGRESS_MIN_INTERVAL == 0.1
    assert len(passed) <= 10


def test_a_request_without_the_extension_is_the_0_2_request_exactly() -> None:
    req = ToolCallReq(agent="a", req_id="r", computer="c", tool_name="t", params={}, timeout=5)
    assert set(to_wire(req)) == {"agent", "req_id", "computer", "tool_name", "params", "timeout"}
    asked = to_wire(req.__class__(**{**to_wire(req), "a2c_progress": True}))
    assert asked["a2c_progress"] is True
    assert from_wire(ToolCallReq, asked).a2c_progress is True


def test_a_progress_report_round_trips_and_omits_what_mcp_left_out() -> None:
    report = ToolCallProgress(agent="a", req_id="r", computer="c", progress=2.0)
    assert to_wire(report) == {"agent": "a", "req_id": "r", "computer": "c", "progress": 2.0}
    full = ToolCallProgress(agent="a", req_id="r", computer="c", progress=1, total=4, message="m")
    assert from_wire(ToolCallProgress, to_wire(full)) == full
