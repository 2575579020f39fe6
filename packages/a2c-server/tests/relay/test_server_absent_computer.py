"""The 404 for a Computer not in the caller's office: what the caller
may see (its own office's Computers, a near name, an office its join created), never
another office's names. Pure rules, then a real Server with raw clients."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from a2c_protocol import Event, Role
from a2c_server import Member
from a2c_server._state._absent import (
    MAX_LISTED,
    MIN_RETURN_HOLD,
    NewOffices,
    absent_computer,
    return_hold,
)
from a2c_testkit.server import RawClient, RunningServer, connect_raw, running_server


def _box(name: str, office: str = "o") -> Member:
    return Member(sid=f"sid-{name}", role=Role.COMPUTER, a2c_version="0.2.3", name=name,
                  office_id=office)  # fmt: skip


def test_the_message_lists_the_office_computers_and_suggests_a_near_name() -> None:
    members = [_box("printer"), _box("desk-box"),
               Member(sid="a", role=Role.AGENT, a2c_version="0.2.3", name="desk-bx",
                      office_id="o")]  # fmt: skip
    refusal = absent_computer("desk-bx", "o", members, created_by_caller=False)
    assert refusal.code == 404 and refusal.details == {"computer_name": "desk-bx"}
    assert refusal.message == (
        "Computer 'desk-bx' is not in office 'o' (its Computers: desk-box, printer); "
        "did you mean 'desk-box'?"
    )
    far = absent_computer("zzz", "o", members, created_by_caller=False)
    assert far.message == "Computer 'zzz' is not in office 'o' (its Computers: desk-box, printer)"


def test_a_long_list_is_cut_and_an_empty_office_is_explained() -> None:
    many = [_box(f"c{i:02}") for i in range(MAX_LISTED + 3)]
    cut = absent_computer("x", "o", many, created_by_caller=False).message
    assert f"c{MAX_LISTED - 1:02} and 3 more)" in cut and f"c{MAX_LISTED:02}" not in cut
    created = absent_computer("box-1", "mn", [], created_by_caller=True).message
    assert "the office has no Computer, and it was empty when you joined it" in created
    assert "is the office name right?" in created
    emptied = absent_computer("box-1", "mn", [], created_by_caller=False).message
    assert emptied == "Computer 'box-1' is not in office 'mn': the office has no Computer right now"


def test_new_offices_remember_the_office_a_join_created_until_forgotten() -> None:
    offices = NewOffices()
    offices.joined("s1", "mn", alone=True)
    assert offices.created("s1", "mn") and not offices.created("s1", "other")
    offices.joined("s1", "full", alone=False)  # moved to an office someone was in
    assert not offices.created("s1", "mn") and not offices.created("s1", "full")
    offices.joined("s2", "x", alone=True)
    offices.forget("s2")
    assert not offices.created("s2", "x")


def _call(computer: str) -> dict[str, Any]:
    return {"agent": "ag", "req_id": "r1", "computer": computer, "tool_name": "echo",
            "params": {}, "timeout": 10}  # fmt: skip


async def _joined(stack: AsyncExitStack, srv: RunningServer, role: str, name: str,
                  office: str) -> RawClient:  # fmt: skip
    client = await stack.enter_async_context(connect_raw(srv, role))
    assert await client.join(role, name, office) == (True, None)
    return client


async def test_a_real_server_tells_what_the_caller_may_see_and_nothing_else() -> None:
    async with running_server() as srv, AsyncExitStack() as stack:
        # Another tenant's office holds the very name the caller asks for.
        await _joined(stack, srv, "computer", "box-1", "tenant-b-office")
        await _joined(stack, srv, "computer", "secret-box", "tenant-b-office")

        # An office typo: the caller's join creates an empty office.
        typo = await _joined(stack, srv, "agent", "ag", "mn")
        answer = await typo.call(Event.TOOL_CALL, _call("box-1"))
        assert isinstance(answer, dict) and answer["code"] == 404, answer
        assert answer["message"].startswith("Computer 'box-1' is not in office 'mn': ")
        assert "it was empty when you joined it" in answer["message"]
        assert answer["details"] == {"computer_name": "box-1"}

        # The right office, a typo in the Computer's name.
        await typo.call(Event.LEAVE_OFFICE, {"office_id": "mn"})
        await _joined(stack, srv, "computer", "box-2", "main")
        agent = await _joined(stack, srv, "agent", "ag", "main")
        answer = await agent.call(Event.TOOL_CALL, _call("box-1"))
        assert isinstance(answer, dict) and answer["code"] == 404, answer
        assert answer["message"] == (
            "Computer 'box-1' is not in office 'main' (its Computers: box-2); did you mean 'box-2'?"
        )
        for other in ("tenant-b-office", "secret-box"):  # never another office's names
            assert other not in answer["message"]


async def test_an_office_the_caller_did_not_create_is_only_said_to_be_empty() -> None:
    async with running_server() as srv, AsyncExitStack() as stack:
        box = await stack.enter_async_context(connect_raw(srv, "computer"))
        assert await box.join("computer", "box-1", "main") == (True, None)
        agent = await _joined(stack, srv, "agent", "ag", "main")
        assert await box.call(Event.LEAVE_OFFICE, {"office_id": "main"}) == (True, None)
        answer = await agent.call(Event.TOOL_CALL, _call("box-1"))
        assert isinstance(answer, dict) and answer["message"] == (
            "Computer 'box-1' is not in office 'main': the office has no Computer right now"
        ), answer


def test_a_returning_computers_name_is_held_past_its_longest_reconnect_wait() -> None:
    # A7: the Computer backs off up to 10 s between reconnects; the hold outlasts two of them.
    assert return_hold(6.0) == MIN_RETURN_HOLD == 20.0
    assert return_hold(45.0) == 45.0
