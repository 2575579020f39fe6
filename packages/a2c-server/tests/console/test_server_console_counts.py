"""What the console's tiles and call rows count (pure, from the Server's metrics)."""

from __future__ import annotations

from a2c_protocol import Event
from a2c_server._console._feed import ConsoleFeed
from a2c_server._observe._metrics import RouteOutcome, ServerMetrics
from a2c_server._observe._outcome import call_outcome as _outcome


def test_calls_routed_counts_tool_calls_only() -> None:
    metrics = ServerMetrics()
    feed = ConsoleFeed(registry=None, metrics=metrics, node_id="n", attach=lambda _: None)  # type: ignore[arg-type]
    for event in (Event.GET_TOOLS.value, Event.GET_CONFIG.value, Event.GET_DESKTOP.value):
        metrics.route(event, RouteOutcome.ANSWERED)
    metrics.route(Event.TOOL_CALL.value, RouteOutcome.ANSWERED)
    metrics.route(Event.TOOL_CALL.value, RouteOutcome.REFUSED)
    counters = feed._counters()
    assert counters["calls"] == 2  # not 5: listing tools is not a call
    assert counters["refusals"] == 1


def test_a_tool_error_row_shows_its_code() -> None:
    assert _outcome({"isError": True, "meta": {"error_code": 4001}}) == ("tool error", 4001)
    assert _outcome({"isError": True, "_meta": {"error_code": 4004}}) == ("tool error", 4004)
    assert _outcome({"isError": True}) == ("tool error", None)
    assert _outcome({"code": 404, "message": "no"}) == ("error", 404)
    assert _outcome({"isError": False, "content": []}) == ("ok", None)
