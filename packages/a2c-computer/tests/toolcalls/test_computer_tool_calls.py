"""Tool calls against real stdio MCP servers: success, alias, forbidden, unknown, timeout,
cancel, crash + restart, confirmation, list_changed, paging, no orphans."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from a2c_computer import Computer, ConfirmRequest
from a2c_protocol import Event, is_cancelled, is_timed_out


def text_of(result: Any) -> str:
    return str(result.content[0]["text"])


async def test_a_second_start_keeps_the_running_servers(servers: Any) -> None:
    # A second start() used to launch every server again over the running one, leaving
    # the first child process orphaned and still running.
    async with Computer({"servers": {"desk": servers.desk("desk")}}, name="box") as computer:
        first = text_of(await computer.call_tool("pid", {}))
        await computer.start()
        assert text_of(await computer.call_tool("pid", {})) == first
    assert not _alive(int(first))  # stop() still reaches the one child there is


async def test_a_stopped_computer_stops_twice_quietly_and_runs_nothing(servers: Any) -> None:
    # Spec checklist (runtime contract): a second shutdown is idempotent and no new work
    # is accepted after stop.
    computer = Computer({"servers": {"desk": servers.desk("desk")}}, name="box")
    await computer.__aenter__()
    pid = int(text_of(await computer.call_tool("pid", {})))
    await computer.__aexit__(None, None, None)
    await computer.__aexit__(None, None, None)
    refused = await asyncio.wait_for(computer.call_tool("pid", {}), 10)
    assert refused.is_error and refused.meta is not None and refused.meta["error_code"] == 4001
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_success_alias_forbidden_unknown_and_disabled(servers: Any) -> None:
    config = {
        "servers": {
            "desk": servers.desk(
                "desk",
                "--page-size",
                "3",
                forbidden_tools=["force_push"],
                tool_meta={"echo": {"alias": "desk_echo"}},
            ),
            "plain": servers.plain("plain"),
            "off": servers.desk("off", disabled=True),
        }
    }
    async with Computer(config, name="box") as computer:
        names = {t.name for t in computer.tools()}
        # paging: the desk lists its tools 3 per page; all of them arrive
        assert {"desk_echo", "add", "slow", "crash", "pid", "echo", "search"} <= names
        assert "force_push" not in names
        ok = await computer.call_tool("add", {"a": 2, "b": 3})
        assert not ok.is_error and text_of(ok) == "5" and ok.structured_content == {"sum": 5.0}
        aliased = await computer.call_tool("desk_echo", {"text": "via alias"})
        assert text_of(aliased) == "via alias"
        plain = await computer.call_tool("echo", {"text": "x"})
        assert text_of(plain) == "plain:echo:x"
        forbidden = await computer.call_tool("force_push", {})
        assert (
            forbidden.is_error
            and forbidden.meta is not None
            and forbidden.meta["error_code"] == 4002
        )
        assert "pushed" not in text_of(forbidden)
        unknown = await computer.call_tool("nope", {})
        assert unknown.is_error and unknown.meta is not None and unknown.meta["error_code"] == 4001
        failing = await computer.call_tool("fail", {})
        assert failing.is_error and failing.meta is not None
        assert failing.meta["error_code"] == 4003 and failing.meta["mcp_server"] == "desk"
        assert computer.server_states()["off"].status == "disabled"
        # forbidden and unknown calls never reach a server, so they are not in the history
        assert [r.server for r in computer.history] == ["desk", "desk", "plain", "desk"]
        assert computer.history[-1].success is False


async def test_timeout_is_4004_and_the_mcp_server_sees_the_cancellation(
    servers: Any, tmp_path: Path, wait: Any
) -> None:
    marker = tmp_path / "timeout-marker"
    async with Computer({"servers": {"desk": servers.desk()}}, name="box") as computer:
        result = await computer.call_tool(
            "slow", {"seconds": 120, "marker": str(marker)}, timeout=5
        )
        assert result.is_error and result.meta is not None and result.meta["error_code"] == 4004
        assert result.meta["a2c_timeout"] is True and not is_cancelled(result)
        await wait(
            lambda: marker.exists() and marker.read_text() == "cancelled", 30, "the cancellation"
        )
        again = await computer.call_tool("echo", {"text": "still here"})
        assert text_of(again) == "still here"


async def test_cancel_mid_call_reaches_the_mcp_server(
    servers: Any, tmp_path: Path, wait: Any
) -> None:
    marker = tmp_path / "cancel-marker"
    async with Computer({"servers": {"desk": servers.desk()}}, name="box") as computer:
        call = asyncio.ensure_future(
            computer.call_tool(
                "slow", {"seconds": 60, "marker": str(marker)}, timeout=120, req_id="r-1"
            )
        )
        await wait(
            lambda: marker.exists() and marker.read_text() == "started", 30, "the tool to start"
        )
        assert computer.cancel("r-1") is True
        result = await asyncio.wait_for(call, 30)
        assert result.is_error and result.meta is not None
        assert result.meta == {
            "mcp_server": "desk",
            "a2c_cancelled": True,
            "a2c_cancel_reason": "agent_requested",
        }
        assert is_cancelled(result) and not is_timed_out(result)
        await wait(
            lambda: marker.read_text() == "cancelled", 30, "the MCP server to see the cancellation"
        )
        assert computer.cancel("unknown-id") is False


async def test_crash_mid_call_is_4003_others_keep_serving_and_it_restarts(
    servers: Any, wait: Any
) -> None:
    config = {"servers": {"desk": servers.desk(), "plain": servers.plain()}}
    async with Computer(config, name="box") as computer:
        first_pid = text_of(await computer.call_tool("pid", {}))
        crashed = await computer.call_tool("crash", {}, timeout=30)
        assert crashed.is_error and crashed.meta is not None and crashed.meta["error_code"] == 4003
        plain = await computer.call_tool("search", {"text": "q"})
        assert not plain.is_error
        await wait(
            lambda: (
                computer.server_states()["desk"].restarts >= 1
                and computer.server_states()["desk"].status == "ready"
            ),
            60,
            "the desk to restart",
        )
        second_pid = text_of(await computer.call_tool("pid", {}))
        assert second_pid != first_pid


async def test_shutdown_leaves_no_child_processes(servers: Any, wait: Any) -> None:
    config = {
        "servers": {
            "a": servers.desk("a"),
            "b": servers.desk("b", tool_meta={"pid": {"alias": "pid_b"}}),
        }
    }
    async with Computer(config, name="box") as computer:
        pids = [int(text_of(await computer.call_tool(n, {}))) for n in ("pid", "pid_b")]

    def gone(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie still answers kill(0); reap check via /proc state.
        try:
            return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
        except OSError:
            return True

    await wait(lambda: all(gone(p) for p in pids), 30, "child processes to exit")


async def test_confirmation_policy_and_callback(servers: Any) -> None:
    config = {
        "servers": {
            "desk": servers.desk(default_tool_meta=None, tool_meta={"add": {"auto_apply": True}})
        }
    }
    async with Computer(config, name="box", confirm_policy="deny") as computer:
        denied = await computer.call_tool("echo", {"text": "x"})
        assert denied.is_error and denied.meta is not None and denied.meta["error_code"] == 4005
        assert not (await computer.call_tool("add", {"a": 1, "b": 1})).is_error
    async with Computer(config, name="box") as computer:  # default policy: allow
        assert not (await computer.call_tool("echo", {"text": "x"})).is_error
    asked: list[ConfirmRequest] = []

    async def confirm(request: ConfirmRequest) -> bool:
        asked.append(request)
        return request.arguments.get("text") == "yes"

    async with Computer(config, name="box", confirm=confirm) as computer:
        assert not (
            await computer.call_tool("echo", {"text": "yes"}, req_id="c1", agent="ag")
        ).is_error
        declined = await computer.call_tool("echo", {"text": "no"})
        assert (
            declined.is_error and declined.meta is not None and declined.meta["error_code"] == 4005
        )
        assert asked[0].mcp_server == "desk" and asked[0].tool == "echo" and asked[0].agent == "ag"


async def test_tools_list_changed_refreshes_and_announces(servers: Any, recorder: Any) -> None:
    async with Computer({"servers": {"desk": servers.desk()}}, name="box") as computer:
        computer.add_update_listener(recorder)
        assert "extra" not in {t.name for t in computer.tools()}
        await computer.call_tool("add_tool", {})
        await recorder.wait_count(Event.UPDATE_TOOL_LIST, 1)
        assert "extra" in {t.name for t in computer.tools()}
        assert text_of(await computer.call_tool("extra", {})) == "extra ran"


async def test_a_server_that_fails_to_start_does_not_affect_others(servers: Any) -> None:
    config = {
        "servers": {
            "broken": {
                "type": "stdio",
                "name": "broken",
                "server_parameters": {"command": "/nonexistent/mcp-binary"},
            },
            "desk": servers.desk(),
        }
    }
    async with Computer(config, name="box", restart=False) as computer:
        states = computer.server_states()
        assert states["broken"].status == "failed" and states["broken"].last_error
        assert states["desk"].status == "ready"
        assert not (await computer.call_tool("echo", {"text": "ok"})).is_error


async def test_disabled_server_tools_are_4001_and_runtime_config_changes_apply(
    servers: Any, recorder: Any
) -> None:
    config = {"servers": {"desk": servers.desk(), "plain": servers.plain(disabled=True)}}
    async with Computer(config, name="box") as computer:
        computer.add_update_listener(recorder)
        result = await computer.call_tool("search", {})
        assert result.is_error and result.meta is not None and result.meta["error_code"] == 4001
        enabled = {"servers": {"desk": servers.desk(), "plain": servers.plain()}}
        await computer.update_config(enabled)
        assert computer.server_states()["plain"].status == "ready"
        assert not (await computer.call_tool("search", {})).is_error
        await recorder.wait_count(Event.UPDATE_CONFIG, 1)
        await recorder.wait_count(Event.UPDATE_TOOL_LIST, 1)
        assert computer.config.servers["plain"].disabled is False
        # the unchanged server kept running (same process)
        pid = text_of(await computer.call_tool("pid", {}))
        await computer.update_config({"servers": {"desk": servers.desk()}})
        assert text_of(await computer.call_tool("pid", {})) == pid
        assert "plain" not in computer.server_states()
        gone = await computer.call_tool("search", {})
        assert gone.is_error and gone.meta is not None and gone.meta["error_code"] == 4001


async def test_vrl_adds_its_transformation_and_leaves_the_result_untouched(
    servers: Any, caplog: Any
) -> None:
    script = """
    .summary = "ran " + string!(.tool_name)
    .first_param = .parameters.text
    del(.content)
    """
    broken = ".n = to_int!(.parameters.text)"  # compiles, fails at run time on "abc"
    config = {
        "servers": {
            "desk": servers.desk("desk", vrl=script, tool_meta={"echo": {"alias": "desk_echo"}}),
            "plain": servers.plain("plain", vrl=broken),
        }
    }
    async with Computer(config, name="box") as computer:
        result = await computer.call_tool("desk_echo", {"text": "hi"})
        assert text_of(result) == "hi"  # the original result is returned as is
        assert result.meta is not None
        transformed = json.loads(result.meta["a2c_vrl_transformed"])
        assert transformed["summary"] == "ran desk_echo"
        assert transformed["first_param"] == "hi"
        assert transformed["isError"] is False
        assert "content" not in transformed
        with caplog.at_level("WARNING", logger="a2c_computer.vrl"):
            plain = await computer.call_tool("echo", {"text": "abc"})
        assert not plain.is_error
        assert "a2c_vrl_transformed" not in (plain.meta or {})
        assert any("VRL transformation" in r.getMessage() for r in caplog.records)


async def test_errors_of_an_aliased_tool_name_the_alias_and_keep_the_mcp_name(
    servers: Any,
) -> None:
    """Errors name the alias the Agent called ('snail'); 'slow' would mean nothing to it."""
    config = {"servers": {"desk": servers.desk(tool_meta={"slow": {"alias": "snail"}})}}
    async with Computer(config, name="box") as computer:
        result = await computer.call_tool("snail", {"seconds": 30}, timeout=0.2)
        assert result.is_error and result.meta is not None
        assert result.meta["error_code"] == 4004
        assert "'snail'" in text_of(result) and "'slow'" not in text_of(result)
        assert result.meta["mcp_server"] == "desk" and result.meta["mcp_tool"] == "slow"


async def test_an_unknown_tool_suggests_the_nearest_name(servers: Any) -> None:
    async with Computer({"servers": {"desk": servers.desk()}}, name="box") as computer:
        result = await computer.call_tool("ecko", {"text": "x"})
        assert result.meta is not None and result.meta["error_code"] == 4001
        assert "did you mean 'echo'?" in text_of(result)


async def test_a_tool_that_only_runs_as_an_mcp_task_is_not_offered(servers: Any) -> None:
    """``execution.taskSupport: "required"``: every call without MCP task augmentation fails
    (-32601 from the server), so the tool is not listed and a call by name says why (4015)
    without reaching the MCP server."""
    entry = servers.plain("plain")
    entry["server_parameters"]["env"] = {"A2C_TEST_TASK_TOOL": "1"}
    async with Computer({"servers": {"plain": entry}}, name="box") as computer:
        assert {t.name for t in computer.tools()} == {"echo", "search"}
        assert computer.task_only_tools() == {"research": "plain"}
        refused = await computer.call_tool("research", {})
        assert refused.is_error and refused.meta is not None
        assert refused.meta["error_code"] == 4015 and refused.meta["mcp_server"] == "plain"
        assert "only run as an MCP task" in text_of(refused)
        assert text_of(await computer.call_tool("echo", {"text": "x"})) == "plain:echo:x"
