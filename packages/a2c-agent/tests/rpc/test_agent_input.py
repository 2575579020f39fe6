"""The Agent's input handler: rounds of a tool call that asks, against a real Server.

The Computer is scripted (``a2c_testkit.scripted_input.AskingTool``: a real Socket.IO
client that answers like a Computer of the extension); the real Computer's side is in
tests-integration/test_input_*.py.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from a2c_agent import (
    AsyncAgent,
    BadRequestError,
    ElicitationRequest,
    ElicitationResponse,
    InputCapabilities,
    InputOrigin,
    InputRefusal,
    InputRequest,
    InputResponse,
    InputRoundsExceededError,
    InvalidResponseError,
    SamplingRequest,
    SamplingResponse,
    SyncAgent,
    decline_input,
    result_text,
)
from a2c_protocol import Event
from a2c_testkit.scripted_computer import ScriptedComputer
from a2c_testkit.scripted_input import AskingTool, form_request, sampling_request, url_request

MakeComputer = Callable[..., Awaitable[ScriptedComputer]]
MakeAgent = Callable[..., Awaitable[AsyncAgent]]
MakeOffice = Callable[..., Awaitable[tuple[ScriptedComputer, AsyncAgent]]]
NAME = form_request("Your name?", {"name": {"type": "string"}}, ["name"])


async def test_agent_answers_a_form_through_its_handler(make_office: MakeOffice) -> None:
    seen: list[InputRequest] = []

    async def handler(request: InputRequest) -> InputResponse:
        seen.append(request)
        return ElicitationResponse.accept({"name": "Ann"})

    tool = AskingTool([{"q1": NAME}])
    computer, agent = await make_office(tool, input_handler=handler)
    result = await agent.call_tool("box-1", "greet", {"x": 1}, req_id="call-1")
    assert json.loads(result_text(result)) == [
        {"q1": {"action": "accept", "content": {"name": "Ann"}}}
    ]
    (request,) = seen
    assert isinstance(request, ElicitationRequest)
    assert (request.key, request.mode, request.message) == ("q1", "form", "Your name?")
    assert request.origin == InputOrigin(computer="box-1", tool="greet", mcp_server="asker")
    first, retry = computer.received(Event.TOOL_CALL)
    assert first["req_id"] == "call-1" and retry["req_id"] == "call-1.2"
    assert first["a2c_input"] == InputCapabilities().to_wire()
    assert "a2c_request_state" not in first and retry["a2c_request_state"] == "state-1"
    assert {k: retry[k] for k in ("tool_name", "params", "a2c_input")} == {
        "tool_name": "greet", "params": {"x": 1}, "a2c_input": first["a2c_input"],
    }  # fmt: skip


async def test_agent_without_a_handler_sends_todays_request(make_office: MakeOffice) -> None:
    computer, agent = await make_office(AskingTool([{"q1": NAME}]))
    result = await agent.call_tool("box-1", "greet", {})
    assert result_text(result) == "declined"
    (request,) = computer.received(Event.TOOL_CALL)
    assert set(request) == {"agent", "req_id", "computer", "tool_name", "params", "timeout"}


async def test_agent_loops_rounds_and_runs_a_plain_handler_in_a_thread(
    make_office: MakeOffice,
) -> None:
    threads: list[str] = []

    def handler(request: InputRequest) -> InputResponse:  # a plain function may block
        threads.append(threading.current_thread().name)
        if isinstance(request, SamplingRequest):
            assert request.messages[0]["content"]["text"] == "2+2?"
            return SamplingResponse.text("4", model="test-model")
        assert isinstance(request, ElicitationRequest)
        if request.mode == "url":
            return ElicitationResponse.accept()
        return ElicitationResponse.decline()

    rounds = [{"q1": NAME, "q2": url_request("Sign in", "https://example.test/a")},
              {"s1": sampling_request("2+2?")}]  # fmt: skip
    _, agent = await make_office(AskingTool(rounds))
    result = await agent.call_tool("box-1", "greet", {}, on_input=handler)
    assert json.loads(result_text(result)) == [
        {"q1": {"action": "decline"}, "q2": {"action": "accept"}},
        {"s1": {"role": "assistant", "content": {"type": "text", "text": "4"},
                "model": "test-model", "stopReason": "endTurn"}},
    ]  # fmt: skip
    assert len(threads) == 3 and threading.main_thread().name not in threads


async def test_decline_input_declines_forms_and_refuses_sampling(make_office: MakeOffice) -> None:
    rounds = [{"q1": NAME, "s1": sampling_request("hi")}]
    _, agent = await make_office(AskingTool(rounds), input_handler=decline_input)
    result = await agent.call_tool("box-1", "greet", {})
    answered = json.loads(result_text(result))[0]
    assert answered["q1"] == {"action": "decline"}
    assert answered["s1"]["a2c_error"]["message"].endswith("declined by the Agent")


async def test_declared_capabilities_are_the_agents_choice(make_office: MakeOffice) -> None:
    caps = InputCapabilities(url=False, sampling=False, sampling_tools=False)
    computer, agent = await make_office(
        AskingTool([{"q1": NAME}]), input_handler=decline_input, input_capabilities=caps
    )
    await agent.call_tool("box-1", "greet", {})
    assert computer.received(Event.TOOL_CALL)[0]["a2c_input"] == {"elicitation": {"form": {}}}


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (SamplingResponse.text("x", model="m"), TypeError),  # does not suit a form
        ("yes", TypeError),
        (RuntimeError("handler bug"), RuntimeError),
    ],
)
async def test_a_failing_handler_cancels_the_requests_on_the_computer(
    make_office: MakeOffice, answer: object, error: type[Exception]
) -> None:
    async def handler(request: InputRequest) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    rounds = [{"q1": NAME, "s1": sampling_request("hi")}]
    computer, agent = await make_office(AskingTool(rounds))
    with pytest.raises(error):
        await agent.call_tool("box-1", "greet", {}, on_input=handler, req_id="c")
    cancel = await computer.wait_for_request(Event.TOOL_CALL, lambda p: p["req_id"] == "c.x")
    assert cancel["a2c_request_state"] == "state-1"
    assert cancel["a2c_input_responses"]["q1"] == {"action": "cancel"}
    assert "cancelled by the Agent" in cancel["a2c_input_responses"]["s1"]["a2c_error"]["message"]


async def test_a_cancelled_call_cancels_the_requests_it_waited_on(make_office: MakeOffice) -> None:
    asked = asyncio.Event()

    async def slow(request: InputRequest) -> InputResponse:
        asked.set()
        await asyncio.Event().wait()  # the user never answers
        raise AssertionError("unreachable")

    computer, agent = await make_office(AskingTool([{"q1": NAME}]))
    call = asyncio.create_task(agent.call_tool("box-1", "greet", {}, on_input=slow, req_id="c"))
    await asyncio.wait_for(asked.wait(), 30)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    cancel = await computer.wait_for_request(Event.TOOL_CALL, lambda p: p["req_id"] == "c.x")
    assert cancel["a2c_input_responses"] == {"q1": {"action": "cancel"}}


async def test_too_many_rounds_end_the_call(make_office: MakeOffice) -> None:
    tool = AskingTool([{"q": NAME}] * 5)
    computer, agent = await make_office(tool, input_handler=decline_input, max_input_rounds=2)
    with pytest.raises(InputRoundsExceededError, match="more than 2 times") as caught:
        await agent.call_tool("box-1", "greet", {}, req_id="c")
    assert (caught.value.computer, caught.value.tool, caught.value.rounds) == ("box-1", "greet", 2)
    cancel = await computer.wait_for_request(Event.TOOL_CALL, lambda p: p["req_id"] == "c.x")
    assert cancel["a2c_input_responses"] == {"q": {"action": "cancel"}}
    with pytest.raises(ValueError, match="max_input_rounds"):
        AsyncAgent("http://127.0.0.1:1", name="x", max_input_rounds=0)


@pytest.mark.parametrize(
    "answer",
    [
        {"resultType": "input_required", "inputRequests": {"q": {"method": "tools/call"}},
         "requestState": "s"},
        {"resultType": "input_required", "inputRequests": {"q": NAME}},
    ],
)  # fmt: skip
async def test_a_malformed_input_required_answer_is_an_invalid_response(
    make_computer: MakeComputer, make_agent: MakeAgent, answer: dict[str, Any]
) -> None:
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, lambda payload: answer)
    agent = await make_agent(input_handler=decline_input)
    await agent.join_office("office-1")
    with pytest.raises(InvalidResponseError, match="input-required"):
        await agent.call_tool("box-1", "greet", {})


async def test_the_computers_refusal_of_a_retry_is_a_remote_error(
    make_computer: MakeComputer, make_agent: MakeAgent
) -> None:
    async def forget(request: InputRequest) -> InputResponse:
        return InputRefusal("no")

    tool = AskingTool([{"q1": NAME}])
    computer = await make_computer()

    def answer(payload: dict[str, Any]) -> Any:
        if "a2c_request_state" in payload:
            payload = {**payload, "a2c_request_state": "tampered"}
        return tool(payload)

    computer.on(Event.TOOL_CALL, answer)
    agent = await make_agent(input_handler=forget)
    await agent.join_office("office-1")
    with pytest.raises(BadRequestError) as caught:
        await agent.call_tool("box-1", "greet", {})
    assert caught.value.details == {"reason": "input_state_unknown"}


async def test_sync_agent_takes_a_plain_handler(make_computer: MakeComputer, server: Any) -> None:
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, AskingTool([{"q1": NAME}]))

    def handler(request: InputRequest) -> InputResponse:
        return ElicitationResponse.accept({"name": threading.current_thread().name})

    def script() -> str:
        with SyncAgent(server.url, name="sync-agent", input_handler=handler) as agent:
            agent.join_office("office-1")
            return result_text(agent.call_tool("box-1", "greet", {}))

    answered = json.loads(await asyncio.to_thread(script))[0]["q1"]["content"]["name"]
    assert answered != "a2c-agent-loop"  # not on the agent's loop thread
