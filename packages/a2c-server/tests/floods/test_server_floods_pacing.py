"""The pacing rule for new handshakes under a flood of refused connects."""

from __future__ import annotations

import pytest

from a2c_server._floods._pacing import (
    REFUSE,
    SHED,
    STARTED,
    WAITING,
    HandshakePacer,
    Ticket,
    address_key,
)


def flooded(
    rate: float = 10, max_wait: float = 1.0, now: float = 100.0, max_held: int = 0
) -> HandshakePacer:
    pacer = HandshakePacer(rate=rate, trigger=5, max_wait=max_wait, max_held=max_held)
    for _ in range(5):
        pacer.refused(now)
    return pacer


def tickets(pacer: HandshakePacer, address: str, n: int, now: float) -> list[Ticket]:
    out = [pacer.admit(address, now) for _ in range(n)]
    assert all(isinstance(t, Ticket) for t in out), out
    return out  # type: ignore[return-value]


def started(pacer: HandshakePacer, now: float) -> list[str]:
    return [t.key for t in pacer.due(now) if t.state == STARTED]


def test_nothing_is_paced_without_refusals() -> None:
    pacer = HandshakePacer(rate=10, trigger=5)
    assert [pacer.admit("10.0.0.1", 100.0) for _ in range(50)] == [0.0] * 50
    assert pacer.paced == 0 and pacer.next_due() is None


def test_refusals_over_the_trigger_pace_new_handshakes_one_per_period() -> None:
    pacer = flooded()
    assert pacer.admit("10.0.0.1", 100.5) == 0.0  # the first turn is free
    waiting = tickets(pacer, "10.0.0.1", 3, 100.5)
    assert pacer.paced == 3 and pacer.waiting == 3
    assert pacer.next_due() == pytest.approx(100.6)
    assert started(pacer, 100.55) == []
    assert started(pacer, 100.6) == ["10.0.0.1"]
    assert started(pacer, 100.7) == ["10.0.0.1"]
    assert started(pacer, 100.8) == ["10.0.0.1"]
    assert [t.state for t in waiting] == [STARTED] * 3
    assert pacer.next_due() is None and pacer.waiting == 0


def test_turns_go_round_the_addresses_so_a_flood_cannot_starve_another_address() -> None:
    # 600 handshakes in flight from one address, an honest one from another.
    pacer = flooded(rate=100, max_wait=5.0, max_held=1000)
    pacer.admit("127.0.0.1", 100.0)
    tickets(pacer, "127.0.0.1", 600, 100.0)
    assert pacer.waiting == 500 and pacer.held == 100  # its share: 5 s of turns
    honest = pacer.admit("127.0.0.2", 100.0)
    assert isinstance(honest, Ticket)  # never refused for the other address's flood
    assert started(pacer, 100.01) == ["127.0.0.1"]
    assert started(pacer, 100.02) == ["127.0.0.2"]  # its turn comes next, not in 5 s
    assert honest.state == STARTED


def test_an_address_share_shrinks_as_more_addresses_wait() -> None:
    pacer = flooded(rate=10, max_wait=1.0)  # 10 turns within max_wait
    pacer.admit("a", 100.0)
    tickets(pacer, "b", 5, 100.0)
    tickets(pacer, "c", 5, 100.0)  # two addresses: 5 turns each
    assert pacer.admit("b", 100.0) == REFUSE
    assert pacer.admit("c", 100.0) == REFUSE
    assert pacer.shed == 2
    # A third address still gets in: its first turn is within max_wait.
    assert isinstance(pacer.admit("d", 100.0), Ticket)
    assert started(pacer, 100.1) == ["b"]
    assert started(pacer, 100.2) == ["c"]
    assert started(pacer, 100.3) == ["d"]
    assert started(pacer, 100.4) == ["b"]


def test_a_refused_handshake_is_held_until_max_wait_then_shed() -> None:
    # Answered at once, a closed-loop flooder's surplus lanes come straight back.
    pacer = flooded(rate=10, max_wait=1.0, max_held=2)
    pacer.admit("a", 100.0)
    tickets(pacer, "a", 10, 100.0)  # a's share: 10 turns within max_wait
    held = tickets(pacer, "a", 2, 100.5)
    assert [t.key for t in held] == [None, None] and pacer.held == 2
    assert pacer.admit("a", 100.5) == REFUSE  # past max_held: at once
    assert pacer.shed == 1
    assert all(t.key == "a" for t in pacer.due(100.1))  # held ones never get a turn
    assert pacer.next_due() == pytest.approx(100.2)
    assert pacer.due(101.45) and [t.state for t in held] == [WAITING, WAITING]
    pacer.due(101.5)
    assert [t.state for t in held] == [SHED, SHED] and pacer.held == 0


def test_only_held_handshakes_wake_the_edge_at_their_deadline() -> None:
    pacer = flooded(rate=10, max_wait=1.0, max_held=5)
    pacer.admit("a", 100.0)
    tickets(pacer, "a", 10, 100.0)
    tickets(pacer, "a", 1, 100.3)  # held till 101.3
    while started(pacer, pacer.next_due() or 0.0):
        pass  # a's ten turns, the last at 101.0
    assert pacer.next_due() == pytest.approx(101.3)  # not a turn in the past, again and again


def test_a_handshake_still_waiting_at_max_wait_is_shed() -> None:
    pacer = flooded(rate=10, max_wait=0.5)
    pacer.admit("a", 100.0)
    first = tickets(pacer, "a", 2, 100.0)
    late = tickets(pacer, "b", 2, 100.05)  # "b" joins: "a" now shares its turns
    assert started(pacer, 100.1) == ["a"]
    assert started(pacer, 100.2) == ["b"]
    assert started(pacer, 100.3) == ["a"]
    ended = pacer.due(100.55)  # b's second turn (100.4) was missed; 0.5 s passed
    assert [(t.key, t.state) for t in ended] == [("b", SHED)]
    assert [t.state for t in first + late] == [STARTED, STARTED, STARTED, SHED]
    assert pacer.shed == 1 and pacer.waiting == 0


def test_a_withdrawn_handshake_gives_its_turn_to_the_next() -> None:
    pacer = flooded()
    pacer.admit("a", 100.0)
    gone, kept = tickets(pacer, "a", 2, 100.0)
    pacer.withdraw(gone)
    assert pacer.waiting == 1
    assert [t is kept for t in pacer.due(100.1)] == [True]


def test_a_late_wake_up_catches_up_one_turn_at_most() -> None:
    pacer = flooded()
    pacer.admit("a", 100.0)
    tickets(pacer, "a", 5, 100.0)
    assert len(pacer.due(100.9)) == 2  # the loop woke 0.8 s late: no burst of 8
    assert pacer.next_due() == pytest.approx(101.0)


def test_release_all_sheds_every_waiting_handshake() -> None:
    pacer = flooded()
    pacer.admit("a", 100.0)
    waiting = tickets(pacer, "a", 3, 100.0) + tickets(pacer, "b", 2, 100.0)
    assert pacer.release_all() == waiting
    assert all(t.state == SHED for t in waiting)
    assert pacer.waiting == 0 and pacer.next_due() is None and pacer.shed == 5


def test_ipv6_addresses_share_per_64() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("?") == "?"


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
    assert pacer.admit("a", 1.0) == 0.0
    with pytest.raises(ValueError):
        HandshakePacer(rate=-1)
