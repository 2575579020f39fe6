"""Streamable HTTP and SSE MCP servers under uvicorn: tools, 4006 / 4007 / 4003 upstream."""

from __future__ import annotations

from typing import Any

from a2c_computer import Computer
from a2c_testkit.mcp_servers.http_server import serve_http


def streamable(url: str, token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"url": f"{url}/mcp/", "timeout": "PT10S"}
    if token is not None:
        params["headers"] = {"Authorization": "Bearer ${input:tok}"}
    return {
        "type": "streamable",
        "name": "remote",
        "server_parameters": params,
        "default_tool_meta": {"auto_apply": True},
    }


def sse(url: str, **params: Any) -> dict[str, Any]:
    return {
        "type": "sse",
        "name": "legacy",
        "default_tool_meta": {"auto_apply": True},
        "server_parameters": {"url": f"{url}/sse", "timeout": 10, **params},
    }


async def test_streamable_401_is_4006_and_403_is_4007_with_sanitized_hint() -> None:
    async with serve_http() as url:
        config = {"servers": {"remote": streamable(url)}}
        async with Computer(config, name="box") as computer:
            assert computer.server_states()["remote"].status == "ready", computer.server_states()
            assert not (await computer.call_tool("search", {})).is_error
            missing = await computer.call_tool("secure_read", {})
            assert missing.is_error and missing.meta is not None
            assert missing.meta["error_code"] == 4006 and missing.meta["mcp_server"] == "remote"
            assert missing.meta["auth_hint"]["action"] == "user_authorization_required"
            assert missing.content[0]["text"] == missing.meta["auth_hint"]["message"]
            # one refusal does not tear the session down
            assert not (await computer.call_tool("search", {})).is_error
            flaky = await computer.call_tool("flaky", {})
            assert flaky.is_error and flaky.meta is not None and flaky.meta["error_code"] == 4003

        inputs = [{"id": "tok", "type": "promptString", "description": "token", "password": True}]
        limited = {"inputs": inputs, "servers": {"remote": streamable(url, token="x")}}
        async with Computer(limited, name="box", env={"A2C_SMCP_TOK": "limited"}) as computer:
            refused = await computer.call_tool("secure_read", {})
            assert (
                refused.is_error and refused.meta is not None and refused.meta["error_code"] == 4007
            )
            assert "limited" not in str(refused.meta["auth_hint"])
        async with Computer(limited, name="box", env={"A2C_SMCP_TOK": "good"}) as computer:
            allowed = await computer.call_tool("secure_read", {})
            assert not allowed.is_error and allowed.content[0]["text"] == "http:secure_read"
            # the authored config still shows the placeholder, never the token
            headers = computer.config.servers["remote"].server_parameters.headers  # type: ignore[union-attr]
            assert headers == {"Authorization": "Bearer ${input:tok}"}


async def test_sse_transport_serves_tools_and_desktop() -> None:
    async with serve_http() as url:
        config = {
            "servers": {
                "legacy": {
                    "type": "sse",
                    "name": "legacy",
                    "default_tool_meta": {"auto_apply": True},
                    "server_parameters": {"url": f"{url}/sse", "timeout": 10},
                }
            }
        }
        async with Computer(config, name="box") as computer:
            assert computer.server_states()["legacy"].status == "ready"
            result = await computer.call_tool("search", {})
            assert result.content[0]["text"] == "http:search"
            resources, cursor = await computer.list_resources("legacy")
            assert [r["uri"] for r in resources] == [
                "window://org.a2c.test.http/status"
            ] and cursor is None


async def test_status_errors_never_show_resolved_secrets(caplog: Any) -> None:
    inputs = [{"id": "k", "type": "promptString", "description": "key", "password": True}]
    entry = {
        "type": "streamable",
        "name": "gone",
        "server_parameters": {
            "url": "http://127.0.0.1:9/mcp?api_key=${input:k}",
            "timeout": "PT2S",
        },
    }
    config = {"inputs": inputs, "servers": {"gone": entry}}
    async with Computer(config, name="box", restart=False, env={"A2C_SMCP_K": "s3cr3t-v4lue"}) as c:
        state = c.server_states()["gone"]
        assert state.status == "failed" and state.last_error
        assert "s3cr3t-v4lue" not in state.last_error
    assert "s3cr3t-v4lue" not in caplog.text


async def test_unreachable_http_server_fails_alone() -> None:
    config = {
        "servers": {
            "gone": {
                "type": "streamable",
                "name": "gone",
                "server_parameters": {"url": "http://127.0.0.1:9/mcp", "timeout": "PT2S"},
            }
        }
    }
    async with Computer(config, name="box", restart=False, start_timeout=10) as computer:
        state = computer.server_states()["gone"]
        assert state.status == "failed" and state.last_error


async def test_sse_401_and_403_are_4006_and_4007_and_the_session_survives() -> None:
    async with serve_http() as url:
        inputs = [{"id": "tok", "type": "promptString", "description": "token", "password": True}]
        entry = sse(url, headers={"Authorization": "Bearer ${input:tok}"})
        config = {"inputs": inputs, "servers": {"legacy": entry}}
        async with Computer(config, name="box", env={"A2C_SMCP_TOK": "wrong"}) as computer:
            missing = await computer.call_tool("secure_read", {}, timeout=60)
            assert missing.is_error and missing.meta is not None
            assert missing.meta["error_code"] == 4006 and missing.meta["mcp_server"] == "legacy"
            assert not (await computer.call_tool("search", {}, timeout=60)).is_error
        async with Computer(config, name="box", env={"A2C_SMCP_TOK": "limited"}) as computer:
            refused = await computer.call_tool("secure_read", {}, timeout=60)
            assert refused.is_error and refused.meta is not None
            assert refused.meta["error_code"] == 4007


async def test_a_lost_http_server_is_4003_then_reconnected(wait: Any) -> None:
    async with serve_http() as url:
        port = int(url.rsplit(":", 1)[1])
        computer = Computer({"servers": {"remote": streamable(url)}}, name="box")
        await computer.__aenter__()
    try:
        lost = await computer.call_tool("search", {}, timeout=30)
        assert lost.is_error and lost.meta is not None and lost.meta["error_code"] in (4001, 4003)
        async with serve_http(port=port):
            await wait(
                lambda: (
                    computer.server_states()["remote"].status == "ready"
                    and computer.server_states()["remote"].restarts >= 1
                    # its tools are withdrawn while it is gone and listed again once ready
                    and "search" in {t.name for t in computer.tools()}
                ),
                90,
                "the HTTP MCP server to be reconnected",
            )
            assert not (await computer.call_tool("search", {}, timeout=30)).is_error
    finally:
        await computer.__aexit__(None, None, None)


async def test_idle_sse_session_stays_up_quietly(caplog: Any) -> None:
    """An SSE stream with no traffic hits its read timeout; keep-alive pings prevent that
    (it was torn down with an ERROR traceback and a "process exited?" message).
    """
    import asyncio
    import logging

    caplog.set_level(logging.DEBUG)
    read_timeout = 1.0
    async with serve_http() as url:
        entry = sse(url, sse_read_timeout=read_timeout)
        async with Computer({"servers": {"legacy": entry}}, name="box") as computer:
            assert computer.server_states()["legacy"].status == "ready"
            await asyncio.sleep(5 * read_timeout)  # idle on purpose: the condition under test
            state = computer.server_states()["legacy"]
            assert (state.status, state.restarts) == ("ready", 0), state
            assert not (await computer.call_tool("search", {})).is_error
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not noisy, [f"{r.name}: {r.getMessage()}" for r in noisy]


async def test_a_lost_url_server_is_not_called_a_process(wait: Any) -> None:
    import contextlib

    http = contextlib.AsyncExitStack()
    url = await http.enter_async_context(serve_http())
    try:
        config = {"servers": {"legacy": sse(url)}}
        async with Computer(config, name="box", restart=False) as computer:
            assert computer.server_states()["legacy"].status == "ready"
            await http.aclose()  # the HTTP server goes away under the session
            await wait(
                lambda: computer.server_states()["legacy"].status == "failed",
                what="the SSE server to be seen gone",
            )
            error = computer.server_states()["legacy"].last_error or ""
            assert "process" not in error and "HTTP stream" in error, error
    finally:
        await http.aclose()


async def test_tools_of_a_lost_http_server_are_withdrawn_until_it_is_back(
    wait: Any, recorder: Any
) -> None:
    """The session ends with an error, not a clean close; same withdrawal."""
    from a2c_protocol import Event

    async with serve_http() as url:
        port = int(url.rsplit(":", 1)[1])
        computer = Computer({"servers": {"remote": streamable(url)}}, name="box")
        await computer.__aenter__()
        computer.add_update_listener(recorder)
        assert "search" in {t.name for t in computer.tools()}
    try:
        lost = await computer.call_tool("search", {}, timeout=30)
        assert lost.is_error
        await wait(lambda: not computer.tools(), 60, "the lost server's tools to be withdrawn")
        await recorder.wait_count(Event.UPDATE_TOOL_LIST, 1)
        assert computer.server_states()["remote"].tools == 0
        async with serve_http(port=port):
            await wait(
                lambda: "search" in {t.name for t in computer.tools()},
                90,
                "the tools to come back with the server",
            )
            await recorder.wait_count(Event.UPDATE_TOOL_LIST, 2)
    finally:
        await computer.__aexit__(None, None, None)
