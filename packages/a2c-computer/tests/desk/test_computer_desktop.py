"""Desktop and resources end to end through real MCP servers' notifications (seed §6.3)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from a2c_computer import Computer
from a2c_computer._desk._desktop import list_changed_needs_refresh, updated_needs_refresh
from a2c_protocol import CapabilityNotSupportedError, Event, McpServerNotFoundError


def heads(desktop: list[str]) -> list[str]:
    return [entry.split("\n", 1)[0] for entry in desktop]


async def test_desktop_from_a_real_server_applies_every_rule(
    servers: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        async with Computer({"servers": {"desk": servers.desk()}}, name="box") as computer:
            desktop = await computer.desktop()
    # blob-only window dropped, non-window resource ignored, query dropped, priority 5 → 0.0
    assert heads(desktop) == [
        "window://org.a2c.test.desk/editor",  # 0.9
        "window://org.a2c.test.desk/query",  # 0.7, query dropped
        "window://org.a2c.test.desk/main",  # 0.5
        "window://org.a2c.test.desk/for-user",  # 0.3, audience ["user"] kept
        "window://org.a2c.test.desk/loud",  # 5 → 0.0
    ]
    assert desktop[0] == "window://org.a2c.test.desk/editor\n\neditor content #1"
    assert (
        "query/fragment" in caplog.text
        and "got 5" in caplog.text
        and "lacks 'assistant'" in caplog.text
    )


async def test_desktop_size_window_filter_and_history_order(servers: Any) -> None:
    config = {
        "servers": {
            "a": servers.desk("a", "--host", "org.a2c.test.a", "--profile", "conformant"),
            "b": servers.desk(
                "b",
                "--host",
                "org.a2c.test.b",
                "--profile",
                "conformant",
                tool_meta={"echo": {"alias": "b_echo"}},
            ),
        }
    }
    async with Computer(config, name="box") as computer:
        assert heads(await computer.desktop()) == [
            "window://org.a2c.test.a/main",
            "window://org.a2c.test.a/log",
            "window://org.a2c.test.b/main",
            "window://org.a2c.test.b/log",
        ]
        await computer.call_tool("b_echo", {"text": "use b"})
        assert heads(await computer.desktop(size=1)) == ["window://org.a2c.test.b/main"]
        assert await computer.desktop(size=0) == []
        assert heads(await computer.desktop(window="window://org.a2c.test.a/log")) == [
            "window://org.a2c.test.a/log"
        ]


async def test_host_collision_warns_but_registers_both(
    servers: Any, caplog: pytest.LogCaptureFixture
) -> None:
    config = {
        "servers": {
            "one": servers.desk("one", "--profile", "conformant"),
            "two": servers.desk("two", "--profile", "conformant", tool_meta={}),
        }
    }
    with caplog.at_level(logging.WARNING):
        async with Computer(config, name="box") as computer:
            assert len(await computer.desktop()) == 4
    assert "also used by" in caplog.text


def test_change_detection_decisions() -> None:
    a = frozenset({"window://h/a"})
    assert list_changed_needs_refresh(a, frozenset({"window://h/a", "window://h/b"}))
    assert not list_changed_needs_refresh(a, frozenset({"window://h/a"}))
    assert updated_needs_refresh("window://h/a")
    assert not updated_needs_refresh("note://h/a")


async def test_change_detection_end_to_end(servers: Any, recorder: Any) -> None:
    async with Computer(
        {"servers": {"desk": servers.desk("desk", "--profile", "conformant")}}, name="box"
    ) as computer:
        computer.add_update_listener(recorder)
        # list_changed without a change of the window set: no update_desktop
        await computer.call_tool("relist", {})
        # updated for a non-window URI: ignored
        await computer.call_tool("touch", {"uri": "note://org.a2c.test/readme"})
        # updated for a window URI: update_desktop at once
        await computer.call_tool("touch", {"uri": "window://org.a2c.test.desk/main"})
        await recorder.wait_count(Event.UPDATE_DESKTOP, 1)
        await asyncio.sleep(0.5)  # give a wrong extra announcement the chance to show up
        assert recorder.count(Event.UPDATE_DESKTOP) == 1
        # list_changed with a new window: update_desktop, and the new window is on the desktop
        await computer.call_tool("add_window", {"path": "fresh"})
        await recorder.wait_count(Event.UPDATE_DESKTOP, 2)
        assert "window://org.a2c.test.desk/fresh" in heads(await computer.desktop())
        await computer.call_tool("remove_window", {"path": "fresh"})
        await recorder.wait_count(Event.UPDATE_DESKTOP, 3)
        assert "window://org.a2c.test.desk/fresh" not in heads(await computer.desktop())


# -- seed §6.3: client:get_resources semantics --------------------------------------------


async def test_seed_6_3_get_resources_returns_a_page_and_next_cursor(servers: Any) -> None:
    async with Computer(
        {"servers": {"desk": servers.desk("desk", "--page-size", "2")}}, name="box"
    ) as computer:
        resources, cursor = await computer.list_resources("desk")
        assert len(resources) == 2 and cursor is not None


async def test_seed_6_3_cursor_paging_across_at_least_three_pages_unfiltered(servers: Any) -> None:
    async with Computer(
        {"servers": {"desk": servers.desk("desk", "--page-size", "2")}}, name="box"
    ) as computer:
        pages: list[list[dict[str, Any]]] = []
        cursor: str | None = None
        while True:
            page, cursor = await computer.list_resources("desk", cursor)
            pages.append(page)
            if cursor is None:
                break
        assert len(pages) >= 3
        everything = [r for p in pages for r in p]
        uris = [r["uri"] for r in everything]
        assert len(uris) == len(set(uris)) == 7
        # transparent: query kept, out-of-range priority kept, other schemes kept, MCP spelling kept
        assert "window://org.a2c.test.desk/query?priority=5" in uris
        assert "note://org.a2c.test/readme" in uris
        loud = next(r for r in everything if r["uri"].endswith("/loud"))
        assert loud["annotations"]["priority"] == 5
        assert any("mimeType" in r for r in everything)


async def test_seed_6_3_unknown_or_disabled_server_is_4014(servers: Any) -> None:
    config = {"servers": {"desk": servers.desk(), "off": servers.desk("off", disabled=True)}}
    async with Computer(config, name="box") as computer:
        for name in ("nope", "off"):
            with pytest.raises(McpServerNotFoundError) as info:
                await computer.list_resources(name)
            payload = info.value.to_payload()
            assert payload.code == 4014 and payload.mcp_server_name == name


async def test_seed_6_3_server_without_resources_capability_is_4015(servers: Any) -> None:
    async with Computer({"servers": {"plain": servers.plain()}}, name="box") as computer:
        with pytest.raises(CapabilityNotSupportedError) as info:
            await computer.list_resources("plain")
        payload = info.value.to_payload()
        assert (payload.code, payload.mcp_server_name, payload.capability) == (
            4015,
            "plain",
            "resources",
        )


async def test_server_without_subscribe_has_no_windows_but_lists_resources(servers: Any) -> None:
    config = {
        "servers": {"desk": servers.desk("desk", "--profile", "conformant", "--no-subscribe")}
    }
    async with Computer(config, name="box") as computer:
        assert await computer.desktop() == []
        resources, _ = await computer.list_resources("desk")
        assert [r["uri"] for r in resources] == [
            "window://org.a2c.test.desk/main",
            "window://org.a2c.test.desk/log",
        ]
