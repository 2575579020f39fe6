"""The v0.2 upgrade guide's §6 test matrix, end to end through real processes.

§6.1 window URI parsing (Computer lenient, Agent strict), §6.2 desktop organization,
§6.3 ``client:get_resources``, §6.4 the version handshake against the real command.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from a2c_agent import (
    AsyncAgent,
    CapabilityNotSupportedError,
    InvalidWindowURIError,
    McpServerNotFoundError,
    ProtocolVersionError,
)
from a2c_protocol import PROTOCOL_VERSION, WindowURI, migrate_v01_window
from a2c_testkit.processes import ManagedProcess
from a2c_testkit.triangle import deployment as triangle_deployment
from a2c_testkit.triangle import (
    eventually,
    server_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)


@contextlib.asynccontextmanager
async def deployment(
    procs: Any,
    tmp_path: Path,
    scenes: dict[str, dict[str, Any]],
    entry_fields: dict[str, dict[str, Any]] | None = None,
) -> AsyncIterator[tuple[AsyncAgent, ManagedProcess]]:
    """Server + one Computer ("box") whose MCP servers are the given scenes, + a joined Agent."""
    entries = [
        stdio_scene_entry(
            name,
            write_scene(tmp_path / f"{name}.json", {"name": name, **scene}),
            **(entry_fields or {}).get(name, {}),
        )
        for name, scene in scenes.items()
    ]
    config = write_config(tmp_path / "computer.json", entries)
    async with triangle_deployment(procs.log_dir, config, track=procs.track) as running:
        yield running.agent, running.computer


def window(
    uri: str, text: str, priority: float | None = None, fullscreen: bool | None = None
) -> dict[str, Any]:
    entry: dict[str, Any] = {"uri": uri, "name": uri.rsplit("/", 1)[-1], "text": text}
    annotations: dict[str, Any] = {"audience": ["assistant"]}
    if priority is not None:
        annotations["priority"] = priority
    entry["annotations"] = annotations
    if fullscreen is not None:
        entry["_meta"] = {"fullscreen": fullscreen}
    return entry


def uris(desktop: Sequence[str]) -> list[str]:
    return [entry.split("\n\n", 1)[0] for entry in desktop]


# --------------------------------------------------------------------------- §6.1


async def test_seed_6_1_query_in_served_uri_is_dropped_with_a_warning(
    procs: Any, tmp_path: Path
) -> None:
    scenes = {
        "desk": {"windows": [window("window://org.example.app/main?priority=5", "body", 0.5)]}
    }
    async with deployment(procs, tmp_path, scenes) as (agent, computer):
        desktop = await agent.get_desktop("box")
        assert desktop == ["window://org.example.app/main\n\nbody"]
        await computer.wait_for_log("priority=5")
        warning = [line for line in computer.logs().splitlines() if "priority=5" in line]
        assert any("WARN" in line for line in warning), warning
        # The Agent side is strict: constructing such a URI fails before anything is sent.
        with pytest.raises(InvalidWindowURIError):
            await agent.get_desktop("box", window="window://org.example.app/main?priority=5")
        with pytest.raises(InvalidWindowURIError):
            WindowURI.parse("window://org.example.app/main?priority=5")
        # 0.2.3 (spec delta §8, A14) matches the raw Resource.uri: the normalized URI no
        # longer selects a window served with a query (0.2.0 matched after dropping it).
        assert await agent.get_desktop("box", window="window://org.example.app/main") == []


# --------------------------------------------------------------------------- §6.2

V01_WINDOWS = [  # how a v0.1 MCP server described its windows
    "window://org.example.app/notes?priority=30",
    "window://org.example.app/editor?priority=80&fullscreen=0",
    "window://org.example.app/log?priority=50",
    "window://org.example.app/help",
]


def v01_order(v01: Sequence[str]) -> list[str]:
    """The v0.1 organizer's order for one server: integer priority descending, stable."""

    def priority(uri: str) -> int:
        query = uri.partition("?")[2]
        values = dict(p.split("=") for p in query.split("&") if p)
        return int(values.get("priority", 0))

    return [uri.partition("?")[0] for uri in sorted(v01, key=lambda u: -priority(u))]


async def test_seed_6_2_order_matches_the_v01_description(procs: Any, tmp_path: Path) -> None:
    migrated = []
    for uri in V01_WINDOWS:
        pure, annotations, meta = migrate_v01_window(uri)
        entry: dict[str, Any] = {"uri": pure, "name": pure, "text": f"text of {pure}",
                                 "annotations": {**annotations, "audience": ["assistant"]}}  # fmt: skip
        if meta:
            entry["_meta"] = meta
        migrated.append(entry)
    async with deployment(procs, tmp_path, {"app": {"windows": migrated}}) as (agent, _):
        desktop = await agent.get_desktop("box")
    assert uris(desktop) == v01_order(V01_WINDOWS)
    assert all("?" not in uri for uri in uris(desktop))


async def test_seed_6_2_fullscreen_priority_size_and_history_across_two_servers(
    procs: Any, tmp_path: Path
) -> None:
    scenes = {
        "alpha": {"windows": [
            window("window://org.example.alpha/low", "a-low", 0.2),
            window("window://org.example.alpha/high", "a-high", 0.9),
        ]},
        "beta": {"windows": [
            window("window://org.example.beta/plain", "b-plain", 0.99),
            window("window://org.example.beta/full-1", "b-full-1", 0.1, fullscreen=True),
            window("window://org.example.beta/full-2", "b-full-2", 0.8, fullscreen=True),
        ]},
    }  # fmt: skip
    # Both scenes expose the same tools; aliases keep the exposed names apart.
    aliases = {
        "alpha": {"tool_meta": {"echo": {"alias": "alpha_echo"}}},
        "beta": {"tool_meta": {"echo": {"alias": "beta_echo"}}},
    }
    async with deployment(procs, tmp_path, scenes, aliases) as (agent, _):
        # No tool used yet: servers alphabetical; alpha by priority; beta = its first fullscreen.
        assert uris(await agent.get_desktop("box")) == [
            "window://org.example.alpha/high",
            "window://org.example.alpha/low",
            "window://org.example.beta/full-1",
        ]
        assert uris(await agent.get_desktop("box", size=2)) == [
            "window://org.example.alpha/high",
            "window://org.example.alpha/low",
        ]
        assert await agent.get_desktop("box", size=0) == []
        assert await agent.get_desktop("box", size=-1) == []
        # The most recently used server leads, whatever the alphabet says.
        await agent.call_tool("box", "beta_echo", {"text": "x"}, timeout=30)
        assert uris(await agent.get_desktop("box")) == [
            "window://org.example.beta/full-1",
            "window://org.example.alpha/high",
            "window://org.example.alpha/low",
        ]
        assert uris(await agent.get_desktop("box", size=1)) == ["window://org.example.beta/full-1"]
        await agent.call_tool("box", "alpha_echo", {"text": "x"}, timeout=30)
        assert uris(await agent.get_desktop("box"))[0] == "window://org.example.alpha/high"


# --------------------------------------------------------------------------- §6.3


async def test_seed_6_3_resources_paging_and_errors(procs: Any, tmp_path: Path) -> None:
    windows = [window(f"window://org.example.res/w{i}", f"w{i}", i / 10) for i in range(7)]
    others = [{"uri": f"note://org.example.res/n{i}", "name": f"n{i}"} for i in range(2)]
    scenes = {
        "res": {"windows": windows, "other_resources": others, "page_size": 3},
        "bare": {"resources": False},
    }
    async with deployment(procs, tmp_path, scenes) as (agent, _):
        first = await agent.get_resources("box", "res")
        assert len(first.resources) == 3
        assert first.next_cursor is not None
        pages = 1
        cursor = first.next_cursor
        seen = [r.uri for r in first.resources]
        while cursor is not None:
            page = await agent.get_resources("box", "res", cursor)
            seen += [r.uri for r in page.resources]
            cursor = page.next_cursor
            pages += 1
        assert pages >= 3
        assert seen == [w["uri"] for w in windows] + [o["uri"] for o in others]  # unfiltered
        assert [r.uri async for r in agent.iter_resources("box", "res")] == seen
        annotated = next(r for r in first.resources if r.uri.endswith("/w2"))
        assert annotated.annotations == {"audience": ["assistant"], "priority": 0.2}

        with pytest.raises(McpServerNotFoundError) as not_found:
            await agent.get_resources("box", "no-such-server")
        assert not_found.value.code == 4014
        assert not_found.value.mcp_server_name == "no-such-server"

        with pytest.raises(CapabilityNotSupportedError) as unsupported:
            await agent.get_resources("box", "bare")
        assert unsupported.value.code == 4015
        assert (unsupported.value.mcp_server_name, unsupported.value.capability) == (
            "bare",
            "resources",
        )


# --------------------------------------------------------------------------- §6.4


def _handshake_url(base: str, version: str | None, transport: str = "polling") -> str:
    url = f"{base}/socket.io/?EIO=4&transport={transport}"
    return url if version is None else f"{url}&a2c_version={version}"


@pytest.mark.parametrize(
    ("server_version", "client_version", "status", "code"),
    [
        ("0.2.0", "0.2.0", 200, None),  # exact match
        ("0.2.0", "0.2.1", 200, None),  # PATCH differs
        ("0.3.0", "0.2.0", 400, 4008),  # MINOR differs (0.x)
        ("0.2.0", "0.3.0", 400, 4008),  # MINOR differs, reversed
        ("0.2.0", "1.0.0", 400, 4008),  # MAJOR differs
        ("1.2.0", "1.0.0", 200, None),  # 1.x backward compatible
        ("1.0.0", "1.2.0", 400, 4008),  # 1.x client newer than server
        ("0.2.0", None, 400, 400),  # missing
        ("0.2.0", "abc", 400, 400),  # malformed
    ],
)
async def test_seed_6_4_version_matrix_over_http(
    procs: Any, server_version: str, client_version: str | None, status: int, code: int | None
) -> None:
    async with (
        server_process(procs.log_dir, protocol_version=server_version, track=procs.track) as server,
        httpx.AsyncClient() as http,
    ):
        response = await http.get(_handshake_url(server.url, client_version))
    assert response.status_code == status
    if code is None:
        assert response.text.startswith("0{")  # an Engine.IO open packet
        return
    body = response.json()
    assert body["code"] == code
    if code == 4008:
        assert response.headers["x-a2c-error-code"] == "4008"
        assert body["server_version"] == server_version
        assert body["client_version"] == client_version
        assert isinstance(body["min_supported"], str)
        assert isinstance(body["max_supported"], str)
    elif client_version is None:
        assert body == {"code": 400, "message": "Missing a2c_version query parameter"}
    else:
        assert body["message"].startswith("Invalid a2c_version: ")


async def test_seed_6_4_websocket_only_clients_are_gated(procs: Any) -> None:
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        httpx.AsyncClient() as http,
    ):
        ws_base = server.url.replace("http://", "ws://")
        async with websockets.connect(_handshake_url(ws_base, "0.2.0", "websocket")) as ws:
            opened = await asyncio.wait_for(ws.recv(), 30)
            assert str(opened).startswith("0{")
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(_handshake_url(ws_base, "0.3.0", "websocket"))
        ws_body = refused.value.response.body
        polling = await http.get(_handshake_url(server.url, "0.3.0"))
    assert refused.value.response.status_code == 400
    assert ws_body == polling.content  # byte-identical to the polling path
    assert json.loads(ws_body)["code"] == 4008


async def _at_least(count: Any, floor: float) -> bool:
    return bool(await count >= floor)


async def test_seed_6_4_refused_agent_disconnects_and_never_retries(procs: Any) -> None:
    async with server_process(procs.log_dir, protocol_version="0.3.0", track=procs.track) as server:
        agent = AsyncAgent(server.url, name="planner")
        with pytest.raises(ProtocolVersionError) as info:
            await agent.open()
        error = info.value
        assert (error.client_version, error.server_version) == (PROTOCOL_VERSION, "0.3.0")
        assert (error.min_supported, error.max_supported) == ("0.3.0", "0.3.999")

        async def refusals() -> float:
            # Counted, not read from the log: the gate's WARNING is folded per address.
            async with httpx.AsyncClient(timeout=30) as http:
                text = (await http.get(f"{server.url}/metrics")).text
            return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                       if line.startswith("a2c_server_version_refusals_total{"))  # fmt: skip

        # The Socket.IO attempt, then exactly one plain GET for the authoritative body.
        await eventually(lambda: _at_least(refusals(), 2), what="both refusals counted")
        await asyncio.sleep(3.0)  # a reconnect loop would add refusals within this window
        assert await refusals() == 2
        assert "handshake refused code=4008" in server.process.logs()
        await agent.close()
