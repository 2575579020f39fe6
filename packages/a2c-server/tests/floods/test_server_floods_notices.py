"""The notice coalescing rule: the last notice within an interval wins."""

from __future__ import annotations

from a2c_server._floods._notices import NoticeCoalescer


def test_the_first_notice_after_a_quiet_interval_goes_out_at_once() -> None:
    rule = NoticeCoalescer(0.5)
    assert rule.offer(("s", "k"), 1, now=10.0) is None
    assert rule.offer(("s", "k"), 2, now=10.6) is None  # quiet for a whole interval


def test_a_burst_costs_one_notice_now_and_the_last_at_the_interval_end() -> None:
    rule = NoticeCoalescer(0.5)
    assert rule.offer(("s", "k"), 1, now=10.0) is None
    assert rule.offer(("s", "k"), 2, now=10.1) == 10.5  # held: call due() at 10.5
    assert rule.offer(("s", "k"), 3, now=10.2) == -1.0  # replaces it, no second timer
    assert rule.offer(("s", "k"), 4, now=10.3) == -1.0
    assert rule.due(("s", "k"), now=10.5) == 4  # the last one wins
    assert rule.due(("s", "k"), now=10.5) is None
    # The held notice was sent at 10.5: the next interval runs from there.
    assert rule.offer(("s", "k"), 5, now=10.7) == 11.0
    assert rule.due(("s", "k"), now=11.0) == 5
    assert rule.offer(("s", "k"), 6, now=11.6) is None


def test_senders_and_kinds_are_coalesced_apart() -> None:
    rule = NoticeCoalescer(1.0)
    assert rule.offer(("a", "tools"), 1, now=0.0) is None
    assert rule.offer(("a", "desktop"), 1, now=0.1) is None
    assert rule.offer(("b", "tools"), 1, now=0.1) is None
    assert rule.offer(("a", "tools"), 2, now=0.2) == 1.0


def test_a_sender_gone_leaves_nothing_held_and_quiet_slots_are_pruned() -> None:
    rule = NoticeCoalescer(1.0)
    rule.offer(("a", "tools"), 1, now=0.0)
    rule.offer(("a", "tools"), 2, now=0.1)
    rule.offer(("b", "tools"), 1, now=0.0)
    rule.forget("a")
    assert rule.due(("a", "tools"), now=1.0) is None
    assert len(rule) == 1
    rule.prune(now=5.0)
    assert len(rule) == 0


def test_interval_zero_sends_every_notice() -> None:
    rule = NoticeCoalescer(0.0)
    assert all(rule.offer(("s", "k"), n, now=1.0) is None for n in range(5))
    assert len(rule) == 0
