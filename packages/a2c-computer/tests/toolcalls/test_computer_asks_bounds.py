"""Tools that ask, made safe and truthful: the Computer bounds what its MCP servers ask
(requests per round and per call, web links only), tells the caller the real reason a
question was refused, and frees a server whose question was abandoned.

A real Server, a real Computer, the raw Agent ``alice`` speaking the wire by hand, and real
mcp 2 ``MCPServer`` test servers (``a2c_testkit.mcp_servers.pushy``, which asks too much or
badly, and ``asking``) over stdio or streamable HTTP under uvicorn.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from a2c_computer import Computer
from a2c_testkit.asking_agent import ALL, Caller, asking_office, only, text
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.mcp_servers.http_server import serve_module_http
from a2c_testkit.server import RawClient

AUTO = {"auto_apply": True}


def streamable(name: str, url: str, **fields: Any) -> dict[str, Any]:
    return {"type": "streamable", "name": name, "default_tool_meta": AUTO,
            "server_parameters": {"url": f"{url}/mcp", "timeout": "PT10S"}, **fields}  # fmt: skip


@contextlib.asynccontextmanager
async def over_http(module: str, **computer: Any) -> AsyncIterator[tuple[Computer, RawClient]]:
    async with (
        serve_module_http(module, "--http", "0") as url,
        asking_office({module: streamable(module, url)}, **computer) as (box, alice),
    ):
        yield box, alice


# ------------------------------------------------------- the caller hears the reason


REFUSED = "elicitation/create refused by the A2C Computer"


@pytest.mark.parametrize(("case", "said"), [
    ("takes no input", REFUSED),
    ("takes no forms", REFUSED),
    ("the Agent refuses", "not today"),
    ("no back-channel", "back-channel"),
])  # fmt: skip
async def test_a_refused_question_over_http_is_reported_as_that_refusal(
    case: str, said: str
) -> None:
    """A tool of the SDK's ``MCPServer`` that lets its question's refusal escape fails the
    call with a JSON-RPC error; over streamable HTTP (no credentials configured) the caller
    hears that refusal (4003), never "needs authorization" (4006)."""
    fields = {"mcp_era": "modern"} if case == "no back-channel" else {}
    takes = {"takes no input": None, "takes no forms": {"sampling": {}}}.get(case, ALL)
    async with serve_module_http("pushy", "--http", "0") as url:
        entry = streamable("pushy", url, **fields)
        async with asking_office({"pushy": entry}) as (_, alice):
            caller = Caller(alice, "blunt", takes=takes)
            answer = await caller.call()
            if case == "the Agent refuses":
                key, _ = only(answer)
                refusal = {"a2c_error": {"code": -1, "message": "not today"}}
                answer = await caller.answer({key: refusal})
            assert answer["isError"] is True, answer
            assert answer["meta"]["error_code"] == 4003, answer
            assert "auth_hint" not in answer["meta"]
            assert "needs authorization" not in text(answer)
            assert said in text(answer), answer


# ------------------------------------------------------------------ the bounds


def pushy(**fields: Any) -> dict[str, Any]:
    return stdio_server_config("pushy", "pushy", default_tool_meta=AUTO, **fields)


def declines(answer: Any) -> dict[str, Any]:
    return {key: {"action": "decline"} for key in answer["inputRequests"]}


async def reported(report: Path, lines: int, wait: Any) -> list[str]:
    """The MCP server's own account of the answers it got, once it has ``lines`` of them."""

    def read() -> list[str]:
        return report.read_text().splitlines() if report.exists() else []

    await wait(lambda: len(read()) >= lines, 60, f"{lines} answers reported by the MCP server")
    return read()


async def test_a_round_of_more_than_16_requests_is_refused_and_ends_the_call(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, wait: Any
) -> None:
    """The handshake era: 17 forms asked at once. The Agent is never put a round of more
    than 16, every request gets an error naming the bound, and the call ends with it."""
    caplog.set_level("INFO", logger="a2c_computer")
    report = tmp_path / "report.txt"
    async with asking_office({"pushy": pushy()}) as (box, alice):
        caller = Caller(alice, "flood", {"count": 17, "report": str(report)})
        answer = await caller.call()
        if answer.get("resultType") == "input_required":  # a first part went out
            assert len(answer["inputRequests"]) <= 16
            await wait(lambda: "asked too much" in caplog.text, 60, "the bound's log line")
            answer = await caller.answer(declines(answer))
        assert answer["isError"] is True, answer
        assert "at most 16 are taken per round (max_input_requests_per_round)" in text(answer)
        lines = await reported(report, 17, wait)
        assert all(line.startswith("refused:") and "at most 16" in line for line in lines), lines
        assert "MCP server pushy asked too much during tool flood (Agent alice)" in caplog.text
        await wait(lambda: not box._asks.running, 30, "the server freed")
        # The server is free again: a call that asks within the bounds goes through.
        small = Caller(alice, "flood", {"count": 2})
        answer = await small.call()
        while answer.get("resultType") == "input_required":
            answer = await small.answer(declines(answer))
        assert text(answer) == "flood:decline,decline"


async def test_a_call_of_more_than_64_requests_in_all_is_refused(tmp_path: Path, wait: Any) -> None:
    report = tmp_path / "report.txt"
    async with asking_office({"pushy": pushy()}) as (_, alice):
        caller = Caller(alice, "flood", {"count": 16, "rounds": 5, "report": str(report)})
        answer = await caller.call()
        rounds = 0
        while answer.get("resultType") == "input_required":
            rounds += 1
            assert rounds <= 64, "the call was never stopped"
            answer = await caller.answer(declines(answer))
        assert answer["isError"] is True, answer
        assert "asked 65 input requests in all; at most 64" in text(answer), answer
        lines = await reported(report, 65, wait)
        assert lines[:64] == ["answered: decline"] * 64
        assert "at most 64 are taken per call" in lines[64]


@pytest.mark.parametrize(("count", "computer", "said"), [
    (17, {}, "one round carries 17 input requests; at most 16"),
    (11, {"max_input_requests_per_call": 10}, "asked 11 input requests in all; at most 10"),
    (5, {"max_input_requests_per_round": 4}, "one round carries 5 input requests; at most 4"),
])  # fmt: skip
async def test_a_2026_round_past_a_bound_ends_the_call_unasked(
    count: int, computer: dict[str, Any], said: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="a2c_computer")
    async with asking_office({"pushy": pushy(mcp_era="modern")}, **computer) as (box, alice):
        answer = await Caller(alice, "modern_flood", {"count": count}).call()
        assert "resultType" not in answer, "a round past the bound reached the Agent"
        assert answer["isError"] is True and said in text(answer), answer
        assert said in caplog.text
        assert not box._asks.running
        ok = await Caller(alice, "modern_flood", {"count": 4}).call()
        assert len(ok["inputRequests"]) == 4


@pytest.mark.parametrize("cap", [0, -1, True, 2.5])
def test_a_bound_that_is_not_a_positive_integer_is_a_config_error(cap: Any) -> None:
    from a2c_computer import ConfigError

    with pytest.raises(ConfigError, match="max_input_requests_per_round"):
        Computer({"servers": {}}, name="x", max_input_requests_per_round=cap)


# ------------------------------------------------------------- web links only

HOSTILE_URLS = [
    ("javascript:alert(document.cookie)", "URL scheme 'javascript:' is refused"),
    ("file:///etc/passwd", "URL scheme 'file:' is refused"),
    ("data:text/html,<script>x</script>", "URL scheme 'data:' is refused"),
    ("http://wiki.example.test/connect", "'http:' is taken only for a loopback host"),
]


@pytest.mark.parametrize(("url", "said"), HOSTILE_URLS)
async def test_a_url_that_is_not_a_web_link_is_refused_to_the_mcp_server(
    url: str, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="a2c_computer")
    async with asking_office({"pushy": pushy()}) as (_, alice):
        answer = await Caller(alice, "link", {"url": url}).call()
        assert "resultType" not in answer, "the link reached the Agent"
        got = text(answer)  # the MCP server's own words: the error it was sent
        assert got.startswith("link failed: elicitation/create refused by the A2C Computer")
        assert said in got, got
        assert "MCP server pushy asked for elicitation/create: refused, " in caplog.text


@pytest.mark.parametrize(("url", "said"), HOSTILE_URLS[:2])
async def test_a_2026_url_that_is_not_a_web_link_ends_the_call_unasked(
    url: str, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="a2c_computer")
    async with asking_office({"pushy": pushy(mcp_era="modern")}) as (_, alice):
        answer = await Caller(alice, "modern_link", {"url": url}).call()
        assert "resultType" not in answer, "the link reached the Agent"
        assert answer["isError"] is True and said in text(answer), answer
        logged = "MCP server pushy, tool modern_link: the tool asked for input the call cannot"
        assert f"{logged} give: {said}" in caplog.text


@pytest.mark.parametrize("url", ["https://id.example.test/sign-in", "http://127.0.0.1:8765/cb"])
async def test_a_web_link_reaches_the_agent(url: str) -> None:
    async with asking_office({"pushy": pushy()}) as (_, alice):
        caller = Caller(alice, "link", {"url": url})
        answer = await caller.call()
        key, request = only(answer)
        assert request["params"]["url"] == url
        assert text(await caller.answer({key: {"action": "accept"}})) == "link:accept"


# ------------------------------------------------- an abandoned question frees its server


def asking(**fields: Any) -> dict[str, Any]:
    return stdio_server_config("asking", "asking", default_tool_meta=AUTO, **fields)


@pytest.mark.parametrize(("era", "answer"), [
    (None, {"action": "cancel"}),
    (None, {"a2c_error": {"code": -1, "message": "elicitation/create cancelled"}}),
    ("modern", {"action": "cancel"}),
])  # fmt: skip
async def test_a_tool_that_asks_again_after_its_agent_gave_up_ends_at_once(
    era: str | None, answer: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Our SDK gives a round up by answering every request with a cancel (or a refusal)
    when its handler fails or its call is cancelled. A tool that asks again then is not
    parked for the Computer's input timeout: the call ends at once and the server is free
    for the next call, which asks and is answered."""
    caplog.set_level("INFO", logger="a2c_computer")
    fields = {"mcp_era": era} if era else {}
    async with asking_office({"asking": asking(), "pushy": pushy(**fields)}) as (box, alice):
        name = "twice" if era is None else "modern_twice"
        caller = Caller(alice, name)
        key, _ = only(await caller.call())
        gone = await caller.answer({key: answer}, req_id=f"{name}-1.x")
        assert gone["isError"] is True, gone
        assert not box._asks.running, "the server is still held"
        if "action" in answer:  # a refusal is an error to a handshake-era tool: it fails
            assert "gave this call's questions up" in text(gone)
            assert "asked again after its Agent gave its questions up" in caplog.text
        nxt = Caller(alice, "greet")
        k, _ = only(await nxt.call())
        done = await nxt.answer({k: {"action": "accept", "content": {"name": "N"}}})
        assert text(done) == "hello N"


async def test_the_sdk_whose_handler_raises_frees_the_server_at_once() -> None:
    """Our Agent SDK, a real one: its handler fails on a tool that asks twice; the next
    call of the same server asks and is answered, not refused for the input timeout."""
    from a2c_agent import AsyncAgent
    from a2c_protocol import ElicitationResponse, InputRequest
    from a2c_testkit.server import running_server

    async def fails(request: InputRequest) -> Any:
        raise RuntimeError("the handler fails")

    async def answers(request: InputRequest) -> Any:
        return ElicitationResponse.accept({"name": "S"})

    entry = asking()
    async with (
        running_server() as srv,
        Computer({"servers": {"asking": entry}}, name="box", server_url=srv.url,
                 office_id="o1", socketio_path=srv.socketio_path) as box,
        AsyncAgent(srv.url, name="alice", socketio_path=srv.socketio_path) as agent,
    ):  # fmt: skip
        assert box.link is not None
        await box.link.wait_joined()
        await agent.join_office("o1")
        with pytest.raises(RuntimeError, match="the handler fails"):
            await agent.call_tool("box", "twice", {}, on_input=fails)
        assert not box._asks.running, "the abandoned call still holds the server"
        result = await agent.call_tool("box", "greet", {}, on_input=answers)
        assert result.content[0]["text"] == "hello S"  # type: ignore[index]


async def test_a_request_while_two_calls_run_names_the_call_that_holds_the_server() -> None:
    async with asking_office({"asking": asking()}) as (_, alice):
        first = Caller(alice, "greet")
        only(await first.call())  # parked: waits for alice's answer
        said = text(await Caller(alice, "sign_in").call())
        assert "2 tool calls are running on this MCP server" in said, said
        assert "call greet-1 of tool greet (Agent alice), waiting for its Agent's answer " \
               "until " in said and " UTC" in said  # fmt: skip
        assert "call sign_in-1 of tool sign_in (Agent alice), running" in said
