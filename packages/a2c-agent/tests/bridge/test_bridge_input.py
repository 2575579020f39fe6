"""Input requests through the bridge, the pure parts: the parked calls of 2026-07-28 hosts
(tokens, bindings, expiry, capacity), what a host declared, the requests it is sent."""

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


def test_what_a_host_declared_is_what_it_is_asked() -> None:
    from mcp import types

    from a2c_agent._bridge._input import input_capabilities_of
    from a2c_protocol import InputCapabilities

    def caps(**fields: object) -> types.ClientCapabilities:
        return types.ClientCapabilities.model_validate(fields)

    assert input_capabilities_of(None) is None
    assert input_capabilities_of(caps(roots={})) is None
    everything = caps(elicitation={"form": {}, "url": {}}, sampling={"tools": {}})
    assert input_capabilities_of(everything) == InputCapabilities()
    # an elicitation capability naming no mode means forms (MCP)
    assert input_capabilities_of(caps(elicitation={})) == InputCapabilities(
        url=False, sampling=False, sampling_tools=False
    )
    assert input_capabilities_of(caps(elicitation={"url": {}}, sampling={})) == (
        InputCapabilities(form=False, sampling_tools=False)
    )


def test_a_host_is_asked_only_what_it_declared() -> None:
    from a2c_agent._bridge._input import host_takes
    from a2c_protocol import ElicitationRequest, InputCapabilities, RootsRequest, SamplingRequest

    forms_only = InputCapabilities(url=False, sampling=False, sampling_tools=False)
    form = ElicitationRequest(key="f", message="m", mode="form", requested_schema={})
    url = ElicitationRequest(key="u", message="m", mode="url", url="https://x.test/a")
    sampling, roots = SamplingRequest(key="s"), RootsRequest(key="r")
    assert host_takes(form, forms_only, roots=False)
    assert not host_takes(url, forms_only, roots=True)
    assert not host_takes(sampling, forms_only, roots=True)
    # roots: only a host that declared roots, whatever else it takes
    assert host_takes(roots, forms_only, roots=True)
    assert not host_takes(roots, InputCapabilities(), roots=False)


def test_the_mcp_request_a_host_is_sent() -> None:
    from a2c_agent._bridge._input import mcp_request
    from a2c_protocol import ElicitationRequest

    url = ElicitationRequest(key="k", message="Sign in", mode="url", url="https://x.test/a",
                             params={"mode": "url", "message": "Sign in", "url": "https://x.test/a"})  # fmt: skip
    pushed = mcp_request(url, handshake=True)
    assert pushed["method"] == "elicitation/create" and pushed["params"]["elicitationId"]
    modern = mcp_request(
        ElicitationRequest(key="k", message="m", mode="url", url="https://x.test/a",
                           params={**url.params, "elicitationId": "e1"}), handshake=False,
    )  # fmt: skip
    assert "elicitationId" not in modern["params"] and modern["params"]["url"] == "https://x.test/a"
