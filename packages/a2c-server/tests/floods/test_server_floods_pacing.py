"""The pacing rule for new handshakes under a flood of refused connects (issue 41)."""

from __future__ import annotations

import pytest

from a2c_server._floods._pacing import REFUSE, HandshakePacer


def test_nothing_is_paced_without_refusals() -> None:
    pacer = HandshakePacer(rate=10, trigger=5)
    assert [pacer.delay(100.0) for _ in range(50)] == [0.0] * 50
    assert pacer.paced == 0


def test_refusals_over_the_trigger_pace_new_handshakes_in_arrival_order() -> None:
    pacer = HandshakePacer(rate=10, trigger=5, max_wait=1.0)
    for _ in range(5):
        pacer.refused(100.2)
    waits = [pacer.delay(100.5) for _ in range(4)]
    assert waits == pytest.approx([0.0, 0.1, 0.2, 0.3])
    assert pacer.paced == 3


def test_a_turn_too_far_away_is_refused_at_once() -> None:
    pacer = HandshakePacer(rate=10, trigger=1, max_wait=0.25)
    pacer.refused(7.0)
    assert [pacer.delay(7.0) for _ in range(3)] == pytest.approx([0.0, 0.1, 0.2])
    assert pacer.delay(7.0) == REFUSE
    assert pacer.shed == 1


def test_pacing_ends_a_second_after_the_refusals_stop() -> None:
    pacer = HandshakePacer(rate=10, trigger=3)
    for _ in range(3):
        pacer.refused(50.5)
    assert pacer.active(50.9) and pacer.active(51.9)  # this second, then the next one
    assert not pacer.active(52.0)
    assert not pacer.active(60.0)


def test_rate_zero_turns_pacing_off() -> None:
    pacer = HandshakePacer(rate=0, trigger=1)
    for _ in range(100):
        pacer.refused(1.0)
    assert pacer.delay(1.0) == 0.0
    with pytest.raises(ValueError):
        HandshakePacer(rate=-1)
