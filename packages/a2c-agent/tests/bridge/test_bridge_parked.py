"""The parked calls of 2026-07-28 hosts (``_parked``): tokens, bindings, expiry, capacity."""

from __future__ import annotations

from a2c_agent._bridge._parked import ParkingLot, Refusal, binding_of


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_token_is_used_once_and_bound_to_its_call() -> None:
    lot: ParkingLot[str] = ParkingLot(ttl=10, capacity=4, clock=Clock())
    binding = binding_of("box__greet", {"b": 2, "a": 1})
    token = lot.park("call-1", binding)
    assert len(token) >= 43 and lot.park("call-2", binding) != token
    # another tool or other arguments: refused, the call stays for its own host
    assert lot.claim(token, binding_of("box__other", {"a": 1, "b": 2})) is Refusal.MISMATCH
    assert lot.claim(token, binding_of("box__greet", {"a": 1})) is Refusal.MISMATCH
    assert lot.claim(token, binding_of("box__greet", {"a": 1, "b": 2})) == "call-1"
    assert lot.claim(token, binding) is Refusal.UNKNOWN  # used
    assert lot.claim("never-issued", binding) is Refusal.UNKNOWN


def test_a_call_whose_host_does_not_answer_in_time_is_handed_back() -> None:
    clock = Clock()
    lot: ParkingLot[str] = ParkingLot(ttl=10, capacity=4, clock=clock)
    binding = binding_of("t", None)
    early = lot.park("early", binding)
    clock.now += 6
    late = lot.park("late", binding)
    assert lot.expired() == []
    clock.now += 5
    assert lot.claim(early, binding) is Refusal.UNKNOWN  # past its deadline
    assert lot.expired() == ["early"]
    assert lot.expired() == [] and len(lot) == 1
    assert lot.claim(late, binding) == "late"


def test_capacity_and_drop() -> None:
    lot: ParkingLot[object] = ParkingLot(ttl=10, capacity=2, clock=Clock())
    one, two = object(), object()
    lot.park(one, binding_of("t", {}))
    assert not lot.full()
    token = lot.park(two, binding_of("t", {}))
    assert lot.full()
    lot.drop(two)
    assert not lot.full() and lot.claim(token, binding_of("t", {})) is Refusal.UNKNOWN
