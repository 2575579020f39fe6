"""Prometheus metrics of the real ``a2c-server`` and ``a2c-computer run``.

A scripted session runs against the processes; then both ``/metrics`` endpoints are
scraped and every counter and histogram count is checked against what the session did.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2c_agent import AsyncAgent, JoinOfficeError, RemoteError
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.metrics import metric_sample as sample
from a2c_testkit.metrics import scrape_metrics as scrape
from a2c_testkit.triangle import (
    deployment,
    eventually,
    stdio_scene_entry,
    write_config,
    write_scene,
)

SECRET_ARG = "s3cret-argument-value"


async def metrics_url(computer: Any) -> str:
    await computer.wait_for_log("metrics on http://", timeout=60)
    found = re.search(r"metrics on (http://\S+/metrics)", computer.logs())
    assert found is not None
    return found.group(1)


async def test_metrics_of_server_and_computer_match_a_scripted_session(
    procs: Any, tmp_path: Path
) -> None:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": []})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    async with deployment(
        procs.log_dir, config, computer_name="box-1", track=procs.track,
        computer_args=["--metrics-port", "0"],
    ) as t:  # fmt: skip
        computer_metrics = await metrics_url(t.computer)
        for _ in range(3):
            result = await t.agent.call_tool("box-1", "echo", {"text": SECRET_ARG}, timeout=30)
            assert not result.is_error
        missing = await t.agent.call_tool("box-1", "no-such-tool-xyz", {}, timeout=30)
        assert missing.is_error
        crashed = await t.agent.call_tool("box-1", "crash", {}, timeout=30)
        assert crashed.is_error
        await eventually(
            lambda: _restarted(computer_metrics), what="the crashed MCP server restarted"
        )
        with pytest.raises(RemoteError):
            await t.agent.call_tool("ghost-computer", "echo", {}, timeout=30)
        # A second Agent may connect but not join an office that already has one.
        async with AsyncAgent(t.server.url, name="intruder") as second:
            with pytest.raises(JoinOfficeError):
                await second.join_office(t.office)
        async with httpx.AsyncClient(timeout=10) as client:
            refused = await client.get(
                f"{t.server.url}/socket.io/", params={"EIO": "4", "transport": "polling",
                                                      "a2c_version": "9.0.0"},
            )  # fmt: skip
        assert refused.status_code == 400

        server_text = await eventually(
            lambda: _after_disconnect(t.server.url),
            what="the second Agent's disconnect to show",
        )
        computer_text = await scrape(computer_metrics)

    tool_call = "client:tool_call"
    assert sample(server_text, "a2c_server_routed_requests_total",
                  event=tool_call, outcome="answered") == 5  # fmt: skip
    assert sample(server_text, "a2c_server_routed_requests_total",
                  event=tool_call, outcome="refused") == 1  # fmt: skip
    assert sample(server_text, "a2c_server_routed_request_duration_seconds_count",
                  event=tool_call) == 5  # fmt: skip
    assert sample(server_text, "a2c_server_connected_clients", role="agent") == 1
    assert sample(server_text, "a2c_server_connected_clients", role="computer") == 1
    assert sample(server_text, "a2c_server_offices") == 1
    assert sample(server_text, "a2c_server_joins_total", role="agent", outcome="ok") == 1
    assert sample(server_text, "a2c_server_joins_total", role="agent", outcome="refused",
                  reason="seat_taken") == 1  # fmt: skip
    assert sample(server_text, "a2c_server_joins_total", role="computer", outcome="ok") == 1
    assert sample(server_text, "a2c_server_version_refusals_total", transport="http") == 1

    assert sample(computer_text, "a2c_computer_tool_calls_total",
                  mcp_server="desk", tool="echo", outcome="ok") == 3  # fmt: skip
    assert sample(computer_text, "a2c_computer_tool_calls_total",
                  mcp_server="", tool="(unknown)", outcome="not_found") == 1  # fmt: skip
    assert sample(computer_text, "a2c_computer_tool_calls_total",
                  mcp_server="desk", tool="crash", outcome="error") == 1  # fmt: skip
    assert sample(computer_text, "a2c_computer_tool_call_duration_seconds_count",
                  mcp_server="desk") == 4  # fmt: skip
    assert sample(computer_text, "a2c_computer_mcp_server_state",
                  mcp_server="desk", state="ready") == 1  # fmt: skip
    assert sample(computer_text, "a2c_computer_mcp_server_restarts_total", mcp_server="desk") == 1

    for text in (server_text, computer_text):
        for secret in (SECRET_ARG, "no-such-tool-xyz", "ghost-computer", t.office, "planner"):
            assert secret not in text


async def _after_disconnect(url: str) -> str | None:
    text = await scrape(f"{url}/metrics")
    return text if sample(text, "a2c_server_connected_clients", role="agent") == 1 else None


async def _restarted(url: str) -> bool:
    text = await scrape(url)
    return (
        sample(text, "a2c_computer_mcp_server_restarts_total", mcp_server="desk") == 1
        and sample(text, "a2c_computer_mcp_server_state", mcp_server="desk", state="ready") == 1
    )


async def test_blob_bytes_served_counts_the_chunks_an_agent_read(
    procs: Any, tmp_path: Path
) -> None:
    entry = stdio_server_config("bulk", "bulk", default_tool_meta={"auto_apply": True})
    config = write_config(tmp_path / "computer.json", [entry])
    async with deployment(
        procs.log_dir, config, computer_name="box-1", track=procs.track,
        computer_args=["--metrics-port", "0", "--blob-spool-dir", str(tmp_path / "spool")],
    ) as t:  # fmt: skip
        url = await metrics_url(t.computer)
        result = await t.agent.call_tool(
            "box-1", "png", {"size": 300_000, "seed": 3}, timeout=60, drain_blobs=False
        )
        meta = result.content[0]["_meta"]
        assert sample(await scrape(url), "a2c_computer_blob_bytes_served_total") == 0
        blob = await t.agent.read_blob("box-1", meta["a2c_blob_handle"])
        assert blob.size == meta["a2c_total_size"]
        served = sample(await scrape(url), "a2c_computer_blob_bytes_served_total")
    assert served == blob.size
