"""The per-connection inbound budget's rule, with an injected clock."""

from __future__ import annotations

from a2c_server._floods._inbound import ADMIT, CUT, DROP, REFUSED_COST, InboundBudget, InboundStats

CALL = '2/smcp,7["client:tool_call",{"agent":"a"}]'
ACK = "3/smcp,7[{}]"
CANCEL = '2/smcp,["server:tool_call_cancel",{"agent":"a","req_id":"r"}]'


def spend(budget: InboundBudget, packets: int, now: float) -> None:
    for _ in range(packets):
        assert budget.take(CALL, now) == ADMIT


def test_every_packet_counts_acks_included_and_over_budget_is_dropped() -> None:
    stats = InboundStats()
    budget = InboundBudget(10.0, 5, 0.0, stats)
    spend(budget, 4, 0.0)
    assert budget.take(ACK, 0.0) == ADMIT  # an ack draws on the same bucket
    assert budget.take(ACK, 0.0) == DROP
    assert budget.take(CALL, 0.0) == DROP
    assert stats.dropped == 2
    assert budget.take(CALL, 0.1) == ADMIT  # 10 a second refill one packet in 0.1 s


def test_a_cancel_passes_when_everything_else_is_over_budget() -> None:
    stats = InboundStats()
    budget = InboundBudget(10.0, 5, 0.0, stats)
    spend(budget, 5, 0.0)
    assert budget.take(CALL, 0.0) == DROP
    # The Agent that flooded (or whose burst ran out) can still stop its own call.
    assert [budget.take(CANCEL, 0.0) for _ in range(100)] == [ADMIT] * 100
    assert stats.dropped == 1


def test_sustained_abuse_is_cut_and_refused_packets_cost_more() -> None:
    stats = InboundStats()
    budget = InboundBudget(1.0, 1, 0.0, stats, cut_after=5.0)
    spend(budget, 1, 0.0)
    # Ten packets a second against one a second: the refill admits one now and then, but
    # refusals never pause for a second, so the abuse is sustained and cut after 5 s.
    verdicts = [budget.take(CALL, t / 10) for t in range(60)]
    assert ADMIT in verdicts[5:45] and DROP in verdicts[:45]
    assert 50 <= verdicts.index(CUT) <= 52, verdicts
    assert stats.cut >= 1
    # A refused packet costs REFUSED_COST: after it the refill of 1,000/s needs that long.
    fresh = InboundBudget(1000.0, 100, 0.0, InboundStats())
    fresh.charge(REFUSED_COST * 3, 0.0)  # three refused packets: 150 of a burst of 100
    assert fresh.take(CALL, 0.0) == DROP
    assert fresh.take(CALL, 0.051) == ADMIT
