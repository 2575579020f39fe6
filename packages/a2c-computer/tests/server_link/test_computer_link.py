"""The Socket.IO link against the real a2c-server (in-process under uvicorn)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import queue
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import socketio

from a2c_computer import Computer, LinkError
from a2c_computer._toolcalls._confirm import ConsoleConfirmer
from a2c_protocol import (
    NAMESPACE,
    PROTOCOL_VERSION,
    Event,
    ExtensionEvent,
    ProtocolVersionError,
)
from a2c_server import ServerSettings
from a2c_testkit import running_server


class Agent:
    """A bare python-socketio client acting as the office's Agent."""

    def __init__(self, srv: Any, name: str = "ag") -> None:
        self.srv = srv
        self.name = name
        self.sio = socketio.AsyncClient(reconnection=False, handle_sigint=False)
        self.notes: list[tuple[str, Any]] = []
        self._seen = asyncio.Event()
        for event in (
            Event.NOTIFY_UPDATE_DESKTOP,
            Event.NOTIFY_UPDATE_TOOL_LIST,
            Event.NOTIFY_UPDATE_CONFIG,
            Event.NOTIFY_ENTER_OFFICE,
            Event.NOTIFY_LEAVE_OFFICE,
        ):
            self.sio.on(event.value, self._note(event.value), namespace=NAMESPACE)

    def _note(self, event: str) -> Any:
        async def handler(data: Any) -> None:
            self.notes.append((event, data))
            self._seen.set()

        return handler

    async def join(self, office: str = "o1") -> None:
        await self.sio.connect(
            f"{self.srv.url}?a2c_version={PROTOCOL_VERSION}",
            namespaces=[NAMESPACE],
            socketio_path=self.srv.socketio_path,
            auth={"role": "agent"},
        )
        ok = await self.sio.call(
            Event.JOIN_OFFICE.value,
            {"role": "agent", "name": self.name, "office_id": office},
            namespace=NAMESPACE,
            timeout=30,
        )
        assert ok[0] is True

    async def ask(
        self, event: Event, computer: str = "box", wait_s: float = 90, **fields: Any
    ) -> Any:
        payload = {
            "agent": self.name,
            "req_id": fields.pop("req_id", "r"),
            "computer": computer,
            **fields,
        }
        return await self.sio.call(event.value, payload, namespace=NAMESPACE, timeout=wait_s)

    async def wait_note(self, event: Event, data: Any, timeout: float = 30) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (event.value, data) not in self.notes:
            if loop.time() > deadline:
                raise AssertionError(f"no {event} {data} in {self.notes}")
            self._seen.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._seen.wait(), 0.5)


@contextlib.asynccontextmanager
async def office(
    servers: Any, **computer_kwargs: Any
) -> AsyncIterator[tuple[Any, Computer, Agent]]:
    config = computer_kwargs.pop("config", None) or {
        "servers": {"desk": servers.desk("desk", "--profile", "conformant")}
    }
    async with (
        running_server() as srv,
        Computer(
            config,
            name="box",
            server_url=srv.url,
            office_id="o1",
            socketio_path=srv.socketio_path,
            **computer_kwargs,
        ) as computer,
    ):
        agent = Agent(srv)
        await agent.join()
        try:
            yield srv, computer, agent
        finally:
            await agent.sio.disconnect()


async def test_the_five_client_events(servers: Any) -> None:
    config = {
        "servers": {
            "desk": servers.desk("desk", "--profile", "conformant", "--page-size", "1"),
            "plain": servers.plain(tool_meta={"echo": {"alias": "plain_echo"}}),
        }
    }
    async with office(servers, config=config) as (_, _computer, agent):
        tools = await agent.ask(Event.GET_TOOLS, req_id="t1")
        assert tools["req_id"] == "t1" and "plain_echo" in {t["name"] for t in tools["tools"]}
        call = await agent.ask(
            Event.TOOL_CALL, req_id="c1", tool_name="plain_echo", params={"text": "hi"}, timeout=10
        )
        assert call == {
            "content": [{"type": "text", "text": "plain:echo:hi"}],
            "isError": False,
            "meta": None,
        }
        unknown = await agent.ask(
            Event.TOOL_CALL, req_id="c2", tool_name="nope", params={}, timeout=10
        )
        assert unknown["isError"] is True and unknown["meta"]["error_code"] == 4001
        desktop = await agent.ask(Event.GET_DESKTOP, req_id="d1", desktop_size=1)
        assert desktop["req_id"] == "d1" and len(desktop["desktops"]) == 1
        page = await agent.ask(Event.GET_RESOURCES, req_id="g1", mcp_server="desk")
        assert page["req_id"] == "g1" and len(page["resources"]) == 1 and page["next_cursor"]
        last = await agent.ask(
            Event.GET_RESOURCES, req_id="g2", mcp_server="desk", cursor=page["next_cursor"]
        )
        assert "next_cursor" not in last and len(last["resources"]) == 1
        # Both spellings of the MIME type: MCP's (ours) and the official Agents' snake_case.
        typed = [r for r in page["resources"] + last["resources"] if "mimeType" in r]
        assert typed and all(r["mime_type"] == r["mimeType"] for r in typed)
        assert await agent.ask(Event.GET_RESOURCES, req_id="g3", mcp_server="ghost") == {
            "code": 4014,
            "message": "MCP server 'ghost' is not registered or not running on this Computer",
            "mcp_server_name": "ghost",
        }
        no_caps = await agent.ask(Event.GET_RESOURCES, req_id="g4", mcp_server="plain")
        assert no_caps["code"] == 4015 and no_caps["capability"] == "resources"
        config_ret = await agent.ask(Event.GET_CONFIG, req_id="k1")
        assert sorted(config_ret["servers"]) == ["desk", "plain"]
        assert config_ret["servers"]["desk"]["type"] == "stdio"


async def test_bad_payload_is_400_and_another_computer_is_refused(servers: Any) -> None:
    async with office(servers) as (_, computer, agent):
        # Talk to the Computer's namespace directly, bypassing the Server's own validation.
        link = computer.link
        assert link is not None
        handlers = link._handlers
        bad = await handlers._guarded(Event.GET_DESKTOP, handlers._on_get_desktop)(
            {"agent": "ag", "computer": "box"}
        )
        assert bad["code"] == 400 and "req_id" in bad["message"]
        other = await handlers._guarded(Event.GET_TOOLS, handlers._on_get_tools)(
            {"agent": "ag", "req_id": "x", "computer": "someone-else"}
        )
        assert other["code"] == 403
        # Every client:* event checks the target before it does anything.
        addressed = {"agent": "ag", "req_id": "x", "computer": "someone-else"}
        for event, handler, extra in (
            (Event.GET_SKILLS, handlers._on_get_skills, {}),
            (Event.GET_SKILL, handlers._on_get_skill, {"name": "log-triage"}),
            (Event.GET_BLOB, handlers._on_get_blob, {"blob_handle": "h"}),
            (Event.GET_CONFIG, handlers._on_get_config, {}),
            (Event.GET_DESKTOP, handlers._on_get_desktop, {}),
            (Event.GET_RESOURCES, handlers._on_get_resources, {"mcp_server": "desk"}),
            (Event.TOOL_CALL, handlers._on_tool_call,
             {"tool_name": "add", "params": {"a": 1, "b": 2}, "timeout": 5}),
        ):  # fmt: skip
            refused = await handlers._guarded(event, handler)({**addressed, **extra})
            assert refused["code"] == 403, event
        assert computer.history == []  # the refused tool call never ran
        assert (await agent.ask(Event.GET_TOOLS, req_id="x"))["req_id"] == "x"


async def test_the_computer_answers_only_the_client_events(servers: Any) -> None:
    # Spec checklist: no client:* event can mutate the Computer's management state. The
    # link handles the nine client:* events (client:put_blob writes only to the landing
    # dir) and two notifications (a cancel, an Agent
    # leaving: its calls are cancelled), nothing else
    # (no server:* or management event an Agent could route to it).
    async with office(servers) as (_, computer, _agent):
        link = computer.link
        assert link is not None and link._sio is not None
        handled = set(link._sio.handlers[NAMESPACE])
    client_events = {e.value for e in Event if e.value.startswith("client:")}
    assert len(client_events) == 9
    expected = client_events | {
        Event.NOTIFY_TOOL_CALL_CANCEL.value,
        Event.NOTIFY_LEAVE_OFFICE.value,
        # Only the Server sends it to this session, and it only names a log line's reason.
        ExtensionEvent.NOTIFY_SESSION_EXPIRED.value,
    }
    assert handled - {"connect", "disconnect", "connect_error"} == expected


async def test_get_config_hides_secrets_and_follows_runtime_changes(servers: Any) -> None:
    secret_entry = servers.desk("desk", "--profile", "conformant")
    secret_entry["server_parameters"]["env"] = {
        "DESK_TOKEN": "${input:desk_token}",
        "OPENAI_API_KEY": "sk-literal-key-in-the-config-0123456789",
    }
    config = {
        "inputs": [
            {
                "id": "desk_token",
                "type": "promptString",
                "description": "t",
                "password": True,
                "default": "default-secret",
            },
        ],
        "servers": {"desk": secret_entry},
    }
    async with office(servers, config=config, env={"A2C_SMCP_DESK_TOKEN": "top-secret-value"}) as (
        _,
        computer,
        agent,
    ):
        assert computer.server_states()["desk"].status == "ready"
        shown = await agent.ask(Event.GET_CONFIG, req_id="k1")
        for secret in ("top-secret-value", "sk-literal", "default-secret"):
            assert secret not in str(shown)
        assert shown["servers"]["desk"]["server_parameters"]["env"] == {
            "DESK_TOKEN": "${input:desk_token}",  # a placeholder names the input: shown
            "OPENAI_API_KEY": "[redacted]",
        }
        assert shown["inputs"][0]["id"] == "desk_token"
        updated = {**config, "servers": {**config["servers"], "plain": servers.plain()}}
        await computer.update_config(updated)
        await agent.wait_note(Event.NOTIFY_UPDATE_CONFIG, {"computer": "box"})
        await agent.wait_note(Event.NOTIFY_UPDATE_TOOL_LIST, {"computer": "box"})
        shown = await agent.ask(Event.GET_CONFIG, req_id="k2")
        assert sorted(shown["servers"]) == ["desk", "plain"]
        tools = await agent.ask(Event.GET_TOOLS, req_id="t2")
        assert "search" in {t["name"] for t in tools["tools"]}
        await computer.update_config({"servers": {"plain": servers.plain()}})
        shown = await agent.ask(Event.GET_CONFIG, req_id="k3")
        assert sorted(shown["servers"]) == ["plain"]
        assert "slow" not in {
            t["name"] for t in (await agent.ask(Event.GET_TOOLS, req_id="t3"))["tools"]
        }


async def test_update_desktop_reaches_the_agent(servers: Any) -> None:
    async with office(servers) as (_, computer, agent):
        await computer.call_tool("touch", {"uri": "window://org.a2c.test.desk/main"})
        await agent.wait_note(Event.NOTIFY_UPDATE_DESKTOP, {"computer": "box"})


async def test_cancel_through_the_server_reaches_the_mcp_server(
    servers: Any, tmp_path: Path, wait: Any
) -> None:
    marker = tmp_path / "marker"
    async with office(servers) as (_, _computer, agent):
        call = asyncio.ensure_future(
            agent.ask(
                Event.TOOL_CALL,
                req_id="slow-1",
                tool_name="slow",
                params={"seconds": 60, "marker": str(marker)},
                timeout=120,
            )
        )
        await wait(
            lambda: marker.exists() and marker.read_text() == "started", 30, "the tool to start"
        )
        await agent.sio.emit(
            Event.TOOL_CALL_CANCEL.value, {"agent": "ag", "req_id": "slow-1"}, namespace=NAMESPACE
        )
        result = await asyncio.wait_for(call, 60)
        # 0.2.3: the original call is answered with the result-level marker, no code.
        assert result["isError"] is True
        assert result["meta"]["a2c_cancelled"] is True
        assert result["meta"]["a2c_cancel_reason"] == "agent_requested"
        assert "error_code" not in result["meta"] and "cancelled" not in result["meta"]
        await wait(
            lambda: marker.read_text() == "cancelled", 30, "the MCP server to see the cancellation"
        )


async def test_an_agent_leave_notice_cancels_that_agents_calls(
    servers: Any, tmp_path: Path, wait: Any
) -> None:
    """Rule C3: what a Server node that died with the Agent cannot do."""
    marker = tmp_path / "marker"
    async with office(servers) as (srv, computer, agent):
        call = asyncio.ensure_future(
            agent.ask(
                Event.TOOL_CALL,
                req_id="left-1",
                tool_name="slow",
                params={"seconds": 60, "marker": str(marker)},
                timeout=120,
            )
        )
        await wait(lambda: marker.exists() and marker.read_text() == "started", 30, "start")
        # Another Agent's leave changes nothing; the caller's leave cancels its call.
        for name in ("someone-else", "ag"):
            await srv.app.sio.emit(
                Event.NOTIFY_LEAVE_OFFICE.value,
                {"office_id": "o1", "agent": name},
                room="o1",
                namespace=NAMESPACE,
            )
            if name != "ag":
                await asyncio.sleep(0.2)  # must-not-happen check: a short wait is enough
                assert computer.in_flight() == ["left-1"]
        result = await asyncio.wait_for(call, 60)
        assert result["meta"]["a2c_cancelled"] is True
        assert result["meta"]["a2c_cancel_reason"] == "agent_gone"
        await wait(lambda: marker.read_text() == "cancelled", 30, "the MCP server to see it")


async def test_version_refusal_raises_protocol_version_error(servers: Any) -> None:
    config = {"servers": {"desk": servers.desk("desk", "--profile", "conformant")}}
    async with running_server(ServerSettings(protocol_version="1.0.0")) as srv:
        computer = Computer(
            config, name="box", server_url=srv.url, office_id="o1", socketio_path=srv.socketio_path
        )
        with pytest.raises(ProtocolVersionError) as info:
            async with computer:
                pass
        error = info.value
        assert error.code == 4008
        assert error.client_version == PROTOCOL_VERSION and error.server_version == "1.0.0"
        assert error.min_supported and error.max_supported
        assert computer.server_states()["desk"].status == "stopped"


async def test_hand_set_version_is_refused(servers: Any) -> None:
    with pytest.raises(ValueError, match="a2c_version"):
        Computer(
            {"servers": {}},
            name="box",
            server_url="http://127.0.0.1:1/?a2c_version=0.1.0",
            office_id="o",
        )


async def test_token_travels_as_auth_token(servers: Any) -> None:
    config = {"servers": {}}
    async with running_server(ServerSettings(auth_token="sekrit")) as srv:
        async with Computer(
            config,
            name="box",
            server_url=srv.url,
            office_id="o1",
            socketio_path=srv.socketio_path,
            auth={"token": "sekrit"},
        ) as computer:
            assert computer.link is not None and computer.link.joined

        async def hook() -> dict[str, Any]:
            return {"token": "sekrit", "role": "agent"}  # role stays "computer"

        async with Computer(
            config,
            name="hooked",
            server_url=srv.url,
            office_id="o1",
            socketio_path=srv.socketio_path,
            auth_hook=hook,
        ) as computer:
            assert computer.link is not None and computer.link.joined
        with pytest.raises(LinkError):
            async with Computer(
                config,
                name="box2",
                server_url=srv.url,
                office_id="o1",
                socketio_path=srv.socketio_path,
                auth={"token": "wrong"},
                connect_timeout=10,
            ):
                pass


async def test_reconnects_and_rejoins_after_a_server_restart(servers: Any, wait: Any) -> None:
    config = {"servers": {"plain": servers.plain()}}
    async with running_server() as srv:
        port = srv.port
        computer = Computer(
            config, name="box", server_url=srv.url, office_id="o1", socketio_path=srv.socketio_path
        )
        await computer.__aenter__()
    try:
        link = computer.link
        assert link is not None
        await wait(lambda: not link.joined, 30, "the link to notice the loss")
        async with running_server(port=port) as srv2:
            await wait(lambda: link.joined and link.connections >= 2, 60, "re-join")
            agent = Agent(srv2)
            await agent.join()
            tools = await agent.ask(Event.GET_TOOLS, req_id="after")
            assert {t["name"] for t in tools["tools"]} == {"echo", "search"}
            await agent.sio.disconnect()
            await computer.__aexit__(None, None, None)
    finally:
        await computer.stop()


async def test_version_refusal_on_reconnect_is_fatal_and_not_retried(
    servers: Any, wait: Any
) -> None:
    async with running_server() as srv:
        port = srv.port
        computer = Computer(
            {"servers": {}},
            name="box",
            server_url=srv.url,
            office_id="o1",
            socketio_path=srv.socketio_path,
        )
        await computer.__aenter__()
    try:
        link = computer.link
        assert link is not None
        async with running_server(ServerSettings(protocol_version="1.0.0"), port=port):
            await wait(lambda: link.fatal_error is not None, 60, "the refusal")
            assert isinstance(link.fatal_error, ProtocolVersionError)
            with pytest.raises(ProtocolVersionError):
                await asyncio.wait_for(computer.serve_forever(), 30)
            attempts = link.connections
            await asyncio.sleep(1.5)
            assert link.connections == attempts and not link.joined
    finally:
        await computer.__aexit__(None, None, None)


async def test_waits_for_a_server_that_is_not_up_yet(wait: Any) -> None:
    async with running_server() as srv:
        port, url, path = srv.port, srv.url, srv.socketio_path
    with pytest.raises(LinkError):
        async with Computer(
            {"servers": {}},
            name="early",
            server_url=url,
            office_id="o1",
            socketio_path=path,
            connect_timeout=5,
        ):
            pass
    computer = Computer(
        {"servers": {}},
        name="box",
        server_url=url,
        office_id="o1",
        socketio_path=path,
        wait_for_server=120,
    )
    entering = asyncio.ensure_future(computer.__aenter__())
    try:
        await asyncio.sleep(1.0)  # the Computer is retrying meanwhile
        assert not entering.done()
        async with running_server(port=port):
            await asyncio.wait_for(entering, 120)
            assert computer.link is not None and computer.link.joined
            await computer.__aexit__(None, None, None)
    finally:
        if not entering.done():
            entering.cancel()
        await computer.stop()


class ScriptedTerminal:
    """``read_line`` for :class:`ConsoleConfirmer`: each answer is typed when the test says."""

    def __init__(self) -> None:
        self.questions: list[str] = []
        self.asked = threading.Semaphore(0)
        self._lines: queue.Queue[str] = queue.Queue()

    def read_line(self, question: str) -> str:
        self.questions.append(question)
        self.asked.release()
        return self._lines.get(timeout=120)

    def type(self, line: str) -> None:
        self._lines.put(line)

    async def wait_asked(self) -> None:
        assert await asyncio.to_thread(self.asked.acquire, True, 60), "no question was asked"


async def test_console_prompt_through_the_server_timeout_then_late_yes(servers: Any) -> None:
    """The whole path: Agent → real Server → Computer with the terminal prompt injected."""
    needs_confirm = {
        "servers": {
            "desk": servers.desk(
                "desk", tool_meta={"add": {"auto_apply": True}}, default_tool_meta=None
            )
        }
    }
    terminal = ScriptedTerminal()
    shown = io.StringIO()
    confirmer = ConsoleConfirmer(terminal.read_line, out=shown)
    async with office(servers, config=needs_confirm, confirm=confirmer) as (_, computer, agent):
        first = await agent.ask(
            Event.TOOL_CALL, req_id="t1", tool_name="add_window", params={"path": "late"}, timeout=1
        )
        assert first["isError"] is True and first["meta"]["error_code"] == 4004
        assert first["meta"]["confirmation"] == "timed_out"
        assert "question withdrawn" in shown.getvalue()
        await terminal.wait_asked()
        terminal.type("y")  # the late "yes" to the withdrawn question
        second = asyncio.ensure_future(
            agent.ask(
                Event.TOOL_CALL,
                req_id="t2",
                tool_name="add_window",
                params={"path": "second"},
                timeout=120,
            )
        )
        await terminal.wait_asked()  # asked only after the late line was consumed
        assert "answer 'y' ignored" in shown.getvalue()
        terminal.type("n")
        declined = await asyncio.wait_for(second, 120)
        assert declined["isError"] is True and declined["meta"]["error_code"] == 4005
        assert not (await computer.call_tool("add", {"a": 1, "b": 2})).is_error
        resources, _ = await computer.list_resources("desk")
        assert not any(str(r["uri"]).endswith("/late") for r in resources)
        assert [q.split(" ")[2] for q in terminal.questions] == ["add_window", "add_window"]
