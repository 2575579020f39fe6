"""plan_reload: which MCP servers a new configuration starts, stops, restarts or updates."""

from __future__ import annotations

from typing import Any

from a2c_computer import Computer, ReloadPlan, load_config, plan_reload
from a2c_protocol import Event


def stdio(name: str, *args: str, **fields: Any) -> dict[str, Any]:
    return {"type": "stdio", "name": name,
            "server_parameters": {"command": "python", "args": list(args)}, **fields}  # fmt: skip


def plan(old: dict[str, Any], new: dict[str, Any], **extra: Any) -> ReloadPlan:
    return plan_reload(
        load_config({"servers": old, **extra.get("old_doc", {})}),
        load_config({"servers": new, **extra.get("new_doc", {})}),
    )


def test_same_config_changes_nothing() -> None:
    servers = {"a": stdio("a"), "b": stdio("b", disabled=True)}
    assert plan(servers, servers) == ReloadPlan()
    assert ReloadPlan().summary() == "no server changed"


def test_added_removed_and_changed_connections() -> None:
    result = plan(
        {"a": stdio("a"), "b": stdio("b"), "c": stdio("c")},
        {"a": stdio("a"), "b": stdio("b", "-v"), "d": stdio("d")},
    )
    assert (result.start, result.stop, result.restart, result.in_place) == (
        ("d",), ("c",), ("b",), (),
    )  # fmt: skip
    assert result.config_changed
    assert result.stopping == {"b", "c"}
    assert result.summary() == "started=d stopped=c restarted=b"


def test_enabling_and_disabling_start_and_stop() -> None:
    result = plan({"a": stdio("a", disabled=True), "b": stdio("b")},
                  {"a": stdio("a"), "b": stdio("b", disabled=True)})  # fmt: skip
    assert (result.start, result.stop) == (("a",), ("b",))


def test_metadata_aliases_forbidden_tools_apply_in_place() -> None:
    result = plan(
        {"a": stdio("a"), "b": stdio("b")},
        {
            "a": stdio("a", tool_meta={"echo": {"alias": "a_echo"}}, forbidden_tools=["x"]),
            "b": stdio("b", default_tool_meta={"auto_apply": True}),
        },
    )
    assert result.in_place == ("a", "b") and not result.restart and not result.start


def test_a_changed_input_restarts_only_the_servers_that_use_it() -> None:
    def doc(default: str) -> dict[str, Any]:
        return {"inputs": [{"type": "promptString", "id": "tok", "description": "token",
                            "default": default}]}  # fmt: skip

    servers = {"uses": stdio("uses", "${input:tok}"), "plain": stdio("plain")}
    result = plan(servers, servers, old_doc=doc("one"), new_doc=doc("two"))
    assert result.restart == ("uses",) and result.config_changed


async def test_update_config_in_place_keeps_the_process_and_announces_once(
    servers: Any, recorder: Any
) -> None:
    config = {"servers": {"desk": servers.desk(), "plain": servers.plain()}}
    async with Computer(config, name="box") as computer:
        computer.add_update_listener(recorder)
        pid = (await computer.call_tool("pid", {})).content[0]["text"]
        renamed = {"servers": {
            "desk": servers.desk(tool_meta={"pid": {"alias": "desk_pid"}},
                                 forbidden_tools=["echo"]),
            "plain": servers.plain(),
        }}  # fmt: skip
        # Start-up announcements may still trickle in: count from here.
        configs, lists = recorder.count(Event.UPDATE_CONFIG), recorder.count(Event.UPDATE_TOOL_LIST)
        await computer.update_config(renamed)
        assert recorder.count(Event.UPDATE_CONFIG) == configs + 1
        assert recorder.count(Event.UPDATE_TOOL_LIST) == lists + 1
        assert (await computer.call_tool("desk_pid", {})).content[0]["text"] == pid
        assert (await computer.call_tool("pid", {})).is_error
        names = {tool.name for tool in computer.tools()}
        assert "desk_pid" in names and "pid" not in names
        assert computer.tool_server("echo") == "plain"  # the forbidden desk echo left

        # An input nothing uses: the config changed, no server and no tool did.
        unused = {**renamed, "inputs": [
            {"type": "promptString", "id": "unused", "description": "d", "default": "x"}
        ]}  # fmt: skip
        await computer.update_config(unused)
        assert recorder.count(Event.UPDATE_CONFIG) == configs + 2
        assert recorder.count(Event.UPDATE_TOOL_LIST) == lists + 1
        await computer.update_config(unused)  # the same again: nothing to tell
        assert recorder.count(Event.UPDATE_CONFIG) == configs + 2
        assert (await computer.call_tool("desk_pid", {})).content[0]["text"] == pid
