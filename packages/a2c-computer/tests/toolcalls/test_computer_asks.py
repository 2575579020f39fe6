"""Input requests through the Computer (docs/compatibility.md): a real Server, a real Computer
hosting the real mcp 2 server ``a2c_testkit.mcp_servers.asking`` (stdio), and a raw Agent
client speaking the wire by hand, so what is checked is exactly what the Agent is sent.

Both MCP eras: the handshake (``mcp_era`` auto: ``ctx.elicit`` and friends are
server-initiated requests) and 2026-07-28 (``mcp_era: modern``: the resolver tools answer
``input_required``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2c_computer import Computer
from a2c_protocol import Event, InputCapabilities
from a2c_testkit.asking_agent import ALL, Caller, asking_office, only, text
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.server import RawClient


@contextlib.asynccontextmanager
async def office(
    era: str | None = None,
    *,
    roots: list[str] | None = None,
    fields: dict[str, Any] | None = None,
    **computer: Any,
) -> AsyncIterator[tuple[Computer, RawClient]]:
    entry = stdio_server_config(
        "asking", "asking", default_tool_meta={"auto_apply": True}, **(fields or {})
    )
    if era is not None:
        entry["mcp_era"] = era
    if roots is not None:
        entry["roots"] = roots
    async with asking_office({"asking": entry}, **computer) as (box, alice):
        yield box, alice


# --------------------------------------------------------------- the two eras


@pytest.mark.parametrize(("era", "tool", "said"), [
    (None, "greet", "hello Ann (30)"),
    ("modern", "resolved_greet", "resolved hello Ann"),
    (None, "resolved_greet", "resolved hello Ann"),
])  # fmt: skip
async def test_a_form_reaches_the_agent_and_its_answer_the_tool(
    era: str | None, tool: str, said: str
) -> None:
    async with office(era) as (_, alice):
        caller = Caller(alice, tool)
        first = await caller.call()
        key, request = only(first)
        assert request["method"] == "elicitation/create"
        assert request["params"]["requestedSchema"]["properties"]["name"]["type"] == "string"
        assert first["_meta"] == {"a2c_mcp_server": "asking", "a2c_expires_in": 300.0}
        content = {"name": "Ann", "age": 30} if tool == "greet" else {"name": "Ann"}
        done = await caller.answer({key: {"action": "accept", "content": content}})
        assert text(done) == said


@pytest.mark.parametrize(("era", "tool"), [(None, "greet"), ("modern", "resolved_greet")])
async def test_a_call_that_asked_ends_like_any_call(era: str | None, tool: str) -> None:
    """The answer to the last round goes through the server's VRL program, and the call is
    in the history under the server and its own tool name, as a call that never asked."""
    fields = {"vrl": '.summary = "ran " + string!(.tool_name)',
              "tool_meta": {tool: {"alias": "booking"}}}  # fmt: skip
    async with office(era, fields=fields) as (box, alice):
        caller = Caller(alice, "booking")
        key, _ = only(await caller.call())
        content = {"name": "Ann", "age": 30} if tool == "greet" else {"name": "Ann"}
        done = await caller.answer({key: {"action": "accept", "content": content}})
        assert "hello Ann" in text(done), done
        assert json.loads(done["meta"]["a2c_vrl_transformed"])["summary"] == "ran booking"
        record = box.history[-1]
        assert (record.server, record.tool, record.success) == ("asking", tool, True)


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_decline_reaches_the_mcp_server_as_a_decline(action: str) -> None:
    async with office() as (_, alice):
        caller = Caller(alice, "greet")
        key, _ = only(await caller.call())
        assert text(await caller.answer({key: {"action": action}})) == f"greet:{action}"


async def test_a_url_is_relayed_and_accepted_without_content() -> None:
    async with office() as (_, alice):
        caller = Caller(alice, "sign_in")
        key, request = only(await caller.call())
        assert request["params"]["mode"] == "url"
        assert request["params"]["url"] == "https://wiki.example.test/connect?s=1"
        # Content sent with a URL's acceptance is dropped: a URL carries none back.
        done = await caller.answer({key: {"action": "accept", "content": {"x": "y"}}})
        assert text(done) == "sign_in:accept"


@pytest.mark.parametrize(("era", "tool", "question"), [
    (None, "ask_model", {"question": "2+2?"}),
    ("modern", "resolved_sample", {}),
])  # fmt: skip
async def test_sampling_reaches_the_agent(
    era: str | None, tool: str, question: dict[str, Any]
) -> None:
    async with office(era) as (_, alice):
        caller = Caller(alice, tool, question)
        key, request = only(await caller.call())
        assert request["method"] == "sampling/createMessage"
        assert request["params"]["messages"][0]["role"] == "user"
        reply = {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m",
                 "stopReason": "endTurn"}  # fmt: skip
        assert text(await caller.answer({key: reply})).endswith("model:4")


async def test_sampling_with_tools_reaches_the_agent_and_a_tool_use_comes_back() -> None:
    async with office() as (_, alice):
        caller = Caller(alice, "ask_model_tools", {"question": "weather in Paris?"})
        key, request = only(await caller.call())
        assert [t["name"] for t in request["params"]["tools"]] == ["get_weather"]
        use = {"role": "assistant", "model": "m", "stopReason": "toolUse",
               "content": [{"type": "tool_use", "id": "c1", "name": "get_weather",
                            "input": {"city": "Paris"}}]}  # fmt: skip
        assert text(await caller.answer({key: use})) == 'model used get_weather({"city": "Paris"})'


async def test_sampling_with_tools_is_not_put_to_an_agent_that_did_not_declare_it() -> None:
    async with office() as (_, alice):
        caller = Caller(alice, "ask_model_tools", {"question": "?"}, takes={"sampling": {}})
        said = text(await caller.call())
        assert said.startswith("ask_model_tools failed:")
        assert "does not take sampling with tools" in said


async def test_two_rounds_in_one_call() -> None:
    async with office() as (_, alice):
        caller = Caller(alice, "twice")
        key, request = only(await caller.call())
        assert request["params"]["message"] == "First?"
        second = await caller.answer({key: {"action": "accept", "content": {"name": "a"}}})
        key2, request2 = only(second)
        assert request2["params"]["message"] == "Second?"
        assert text(await caller.answer({key2: {"action": "decline"}})) == "twice:a,decline"


# ------------------------------------------------------------------------ roots


@pytest.mark.parametrize(("era", "tool"), [(None, "roots"), ("modern", "resolved_roots")])
async def test_roots_are_answered_by_the_computer_from_its_config(
    era: str | None, tool: str, tmp_path: Path
) -> None:
    async with office(era, roots=[str(tmp_path), "file:///srv/data"]) as (_, alice):
        for takes in (None, ALL):  # the Agent is never asked, declared or not
            said = text(await Caller(alice, tool, takes=takes).call())
            assert said.endswith(f"roots:{tmp_path.as_uri()},file:///srv/data"), said


@pytest.mark.parametrize(("era", "asking"), [(None, False), ("modern", True)])
async def test_a_plain_call_is_an_asking_one_only_where_roots_need_it(
    era: str | None, asking: bool, wait: Any, tmp_path: Path
) -> None:
    # The handshake era answers roots/list in the session's callback; only a 2026-07-28
    # input_required result needs the call's rounds, so only there does a plain call pay them.
    async with office(era, roots=[str(tmp_path)]) as (box, alice):
        busy = asyncio.ensure_future(Caller(alice, "pause", {"seconds": 3}, takes=None).call())
        await wait(lambda: bool(box._asks.running), 30, "the call on the MCP server")
        (call,) = box._asks.running["asking"]
        assert (not isinstance(call, str)) is asking  # a plain call is there by its req_id
        assert text(await busy) == "paused"


async def test_without_configured_roots_a_server_is_not_offered_them() -> None:
    async with office() as (_, alice):
        said = text(await Caller(alice, "roots").call())
        assert said.startswith("roots failed:")


async def test_a_root_that_is_not_absolute_is_a_config_error() -> None:
    from a2c_computer import ConfigError, load_config

    entry = stdio_server_config("asking", "asking", roots=["relative/dir", "https://x"])
    with pytest.raises(ConfigError) as caught:
        load_config({"servers": {"asking": entry}})
    assert "roots[0]" in str(caught.value) and "roots[1]" in str(caught.value)


# ------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("era", "tool", "said"), [
    (None, "greet", "greet failed: elicitation/create refused by the A2C Computer: the "
                    "caller of this tool takes no questions during the call"),
    ("modern", "resolved_greet", "its caller takes no questions"),
])  # fmt: skip
async def test_a_call_that_did_not_declare_gets_todays_refusal(
    era: str | None, tool: str, said: str
) -> None:
    async with office(era) as (_, alice):
        answer = await Caller(alice, tool, takes=None).call()
        assert "resultType" not in answer
        assert said in text(answer)


async def test_a_form_asking_for_a_secret_is_refused_unasked() -> None:
    async with office() as (_, alice):
        said = text(await Caller(alice, "password").call())
        assert said.startswith("password failed:")
        assert "asks for a secret (password)" in said


async def test_a_request_while_two_calls_run_on_the_server_is_refused() -> None:
    async with office() as (_, alice):
        busy = asyncio.ensure_future(Caller(alice, "pause", {"seconds": 3}, takes=None).call())
        await asyncio.sleep(0.5)
        said = text(await Caller(alice, "greet").call())
        assert "2 tool calls are running on this MCP server" in said
        assert text(await busy) == "paused"


@pytest.mark.parametrize(("responses", "problem"), [
    ({}, "no answer for 'elicit-1'"),
    ({"elicit-1": {"action": "accept", "content": {"age": 3}}}, "name: required"),
    ({"elicit-1": {"action": "maybe"}}, "$.a2c_input_responses.elicit-1.action"),
    ({"elicit-1": {"role": "assistant"}}, "$.a2c_input_responses.elicit-1.action"),
])  # fmt: skip
async def test_a_bad_answer_is_refused_and_the_request_keeps_waiting(
    responses: dict[str, Any], problem: str
) -> None:
    async with office() as (_, alice):
        caller = Caller(alice, "greet")
        await caller.call()
        refused = await caller.answer(responses)
        assert refused["code"] == 400 and refused["details"] == {
            "reason": "input_responses_invalid"
        }
        assert problem in refused["message"]
        done = await caller.answer({"elicit-1": {"action": "accept", "content": {"name": "B"}}})
        assert text(done) == "hello B"


@pytest.mark.parametrize(("change", "reason"), [
    ({"tool_name": "sign_in"}, "input_state_mismatch"),
    ({"params": {"other": 1}}, "input_state_mismatch"),
    ({"a2c_request_state": "forged"}, "input_state_unknown"),
])  # fmt: skip
async def test_a_state_answers_only_the_call_it_was_given_to(
    change: dict[str, Any], reason: str
) -> None:
    async with office() as (_, alice):
        caller = Caller(alice, "greet")
        await caller.call()
        answers = {"elicit-1": {"action": "accept", "content": {"name": "Z"}}}
        refused = await caller.answer(answers, **change)
        assert refused["code"] == 400 and refused["details"] == {"reason": reason}
        assert text(await caller.answer(answers)) == "hello Z"  # still there for its call
        used = await caller.answer(answers)  # used once
        assert used["details"] == {"reason": "input_state_unknown"}


async def test_another_agent_or_office_cannot_use_a_state() -> None:
    from a2c_computer._toolcalls._extensions import CallExtras, InputAnswer, InputAsk
    from a2c_protocol._input import (
        InputBinding,
        params_digest,
    )

    async with office() as (box, alice):
        caller = Caller(alice, "greet")
        await caller.call()
        mine = InputBinding(agent="alice", office="o1", computer="box", tool="greet",
                            params_digest=params_digest({}))  # fmt: skip
        answers = {"elicit-1": {"action": "accept", "content": {"name": "Q"}}}
        for other in (attrs.evolve(mine, agent="mallory"), attrs.evolve(mine, office="o2")):
            ask = InputAsk(takes=InputCapabilities(), binding=other, responses=answers,
                           state=caller.state)  # fmt: skip
            refused = await box.call_tool_round("greet", {}, req_id=f"x-{other.agent}",
                                                extras=CallExtras(ask=ask))  # fmt: skip
            assert isinstance(refused, InputAnswer)
            assert refused.wire["details"] == {"reason": "input_state_mismatch"}
            assert "alice" not in refused.wire["message"]
        assert text(await caller.answer(answers)) == "hello Q"


# --------------------------------------------------------- expiry and leaving


async def test_an_unanswered_request_expires_and_the_call_is_cancelled(
    caplog: pytest.LogCaptureFixture, wait: Any
) -> None:
    caplog.set_level("INFO", logger="a2c_computer")
    async with office(input_timeout=1.0) as (box, alice):
        caller = Caller(alice, "greet")
        first = await caller.call()
        assert first["_meta"]["a2c_expires_in"] == 1.0
        await wait(lambda: "expired after 1 s" in caplog.text, 30, "the expiry log line")
        assert not box._asks.running  # the MCP call was cancelled
        late = await caller.answer({"elicit-1": {"action": "accept", "content": {"name": "L"}}})
        assert late["code"] == 400 and late["details"] == {"reason": "input_state_expired"}
        assert "call the tool again" in late["message"]
        assert text(await Caller(alice, "echo", {"text": "x"}).call()).endswith(":x")


async def test_an_agent_that_leaves_cancels_its_waiting_calls(
    caplog: pytest.LogCaptureFixture, wait: Any
) -> None:
    caplog.set_level("INFO", logger="a2c_computer")
    async with office() as (box, alice):
        await Caller(alice, "greet").call()
        assert box._asks.running
        await alice.sio.call("server:leave_office", {"office_id": "o1"}, namespace="/smcp")
        await wait(lambda: "Agent alice left, the call is cancelled" in caplog.text, 30, "log")
        await wait(lambda: not box._asks.running, 30, "the MCP call's end")


async def test_a_round_that_waits_longer_than_its_timeout_ends_the_call(wait: Any) -> None:
    async with office() as (box, alice):
        answer = await Caller(alice, "pause", {"seconds": 30}).call(timeout=1)
        assert answer["isError"] is True and answer["meta"]["error_code"] == 4004
        assert answer["meta"]["a2c_timeout"] is True
        await wait(lambda: not box._asks.running, 30, "the MCP call's end")


async def test_a_cancelled_round_cancels_the_mcp_call(wait: Any) -> None:
    async with office() as (box, alice):
        caller = Caller(alice, "pause", {"seconds": 30})
        call = asyncio.ensure_future(caller.call())
        await wait(lambda: bool(box._asks.running), 30, "the call on the MCP server")
        await alice.emit(Event.TOOL_CALL_CANCEL, {"agent": "alice", "req_id": "pause-1"})
        answer = await call
        assert answer["isError"] is True and answer["meta"]["a2c_cancelled"] is True
        await wait(lambda: not box._asks.running, 30, "the MCP call's end")
