"""``GET /metrics``: refusals, size drops and label hygiene on the real in-process Server.

The full scripted session (routed calls, joins, histogram counts) is checked against the
real processes in tests-integration/test_operations_metrics.py.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
import socketio
from prometheus_client.parser import text_string_to_metric_families

from a2c_server import ServerSettings
from a2c_testkit.server import RunningServer, connect_raw

TOKEN = "metrics-test-token-42"

# Counters are per process: every client must reach the node whose /metrics is read.
pytestmark = pytest.mark.single_node


@pytest.fixture
def settings() -> ServerSettings:
    return ServerSettings(auth_token=TOKEN, max_message_bytes=4096)


def sample(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


async def scrape(server: RunningServer) -> str:
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.get(f"{server.url}/metrics")
    assert response.status_code == 200
    return response.text


async def test_refusals_by_code_and_version_gate(server: RunningServer) -> None:
    with pytest.raises(socketio.exceptions.ConnectionError):
        async with connect_raw(server, "agent", auth={"token": "wrong-token-value"}):
            pass
    with pytest.raises(socketio.exceptions.ConnectionError):
        async with connect_raw(server, "nobody", auth={"token": TOKEN}):
            pass
    async with httpx.AsyncClient(timeout=30) as http:
        gate = await http.get(
            f"{server.url}/{server.socketio_path}/?EIO=4&transport=polling&a2c_version=7.0.0"
        )
    assert gate.status_code == 400
    text = await scrape(server)
    assert sample(text, "a2c_server_connection_refusals_total", code="401") == 1
    assert sample(text, "a2c_server_connection_refusals_total", code="400") == 1
    assert sample(text, "a2c_server_version_refusals_total", transport="http") == 1
    assert sample(text, "a2c_server_connected_clients", role="agent") == 0
    assert "wrong-token-value" not in text and TOKEN not in text


async def test_an_oversized_websocket_message_is_counted(server: RunningServer) -> None:
    async with connect_raw(
        server, "agent", auth={"token": TOKEN}, transports=["websocket"]
    ) as client:
        assert sample(await scrape(server), "a2c_server_connected_clients", role="agent") == 1
        await client.emit("server:join_office", {"blob": "x" * 20_000})
        for _ in range(600):
            text = await scrape(server)
            if sample(text, "a2c_server_messages_dropped_for_size_total", transport="websocket"):
                break
            await asyncio.sleep(0.05)
    assert sample(text, "a2c_server_messages_dropped_for_size_total", transport="websocket") == 1


async def test_metrics_answers_only_get(server: RunningServer) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        assert (await http.post(f"{server.url}/metrics")).status_code == 405


async def test_drain_answers_held_and_new_calls_and_counts_them(server: RunningServer) -> None:
    """The shutdown drain: a call the Computer never answers gets the flat shutdown error
    once the grace is over, a call that arrives while draining gets it at once."""
    held = asyncio.Event()

    async def never(data: object) -> object:
        held.set()
        await asyncio.Event().wait()
        return None  # pragma: no cover

    call = {"agent": "alice", "req_id": "r1", "computer": "c1", "tool_name": "t",
            "params": {}, "timeout": 60}  # fmt: skip
    async with (
        connect_raw(server, "agent", auth={"token": TOKEN}) as alice,
        connect_raw(server, "computer", auth={"token": TOKEN}) as c1,
    ):
        assert await alice.join("agent", "alice", "o1") == (True, None)
        assert await c1.join("computer", "c1", "o1") == (True, None)
        c1.sio.on("client:tool_call", never, namespace="/smcp")
        pending = asyncio.ensure_future(alice.call("client:tool_call", call, timeout=60))
        await asyncio.wait_for(held.wait(), 30)
        draining = asyncio.ensure_future(server.app.drain.drain(0.2))
        answer = await asyncio.wait_for(pending, 30)
        assert answer == {
            "code": 500,
            "message": "The Server shut down before Computer 'c1' answered; the call was sent, "
            "so it may have run: retry only an idempotent call",
            "details": {"computer_name": "c1", "reason": "server_shutdown", "delivered": True},
        }
        late = await alice.call("client:tool_call", {**call, "req_id": "r2"})
        assert isinstance(late, dict) and late["details"] == {
            "reason": "server_shutdown",
            "delivered": False,
        }
        await asyncio.wait_for(draining, 30)
        text = await scrape(server)
    assert sample(text, "a2c_server_routed_requests_total",
                  event="client:tool_call", outcome="shutdown") == 2  # fmt: skip
    assert sample(text, "a2c_server_routed_request_duration_seconds_count",
                  event="client:tool_call") == 1  # fmt: skip


async def test_join_refusals_are_counted_by_reason(server: RunningServer) -> None:
    async with (
        connect_raw(server, "agent", auth={"token": TOKEN}) as first,
        connect_raw(server, "agent", auth={"token": TOKEN}) as second,
    ):
        assert await first.join("agent", "a1", "o1") == (True, None)
        refused = await second.join("agent", "a2", "o1")
        assert isinstance(refused, tuple) and refused[0] is False
        malformed = await second.call("server:join_office", {"role": "agent"})
        assert isinstance(malformed, tuple) and malformed[0] is False
        text = await scrape(server)
    joins = "a2c_server_joins_total"
    assert sample(text, joins, role="agent", outcome="ok", reason="") == 1
    assert sample(text, joins, role="agent", outcome="refused", reason="seat_taken") == 1
    assert sample(text, joins, role="agent", outcome="refused", reason="invalid_payload") == 1
