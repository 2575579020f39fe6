"""A cancel or the call's timeout settles an open confirmation.

A late "yes" to a withdrawn question must never run the tool. The side effect checked is
``add_window`` adding a window: after the late answer, one more (auto-applied) call goes
through the same stdio MCP server, which handles requests in order, so a late run would
show up in the listing that follows.
"""

from __future__ import annotations

import asyncio
from typing import Any

from a2c_computer import Computer, ConfirmRequest

NEEDS_CONFIRM = {"tool_meta": {"add": {"auto_apply": True}}, "default_tool_meta": None}


def _config(servers: Any) -> dict[str, Any]:
    return {"servers": {"desk": servers.desk("desk", **NEEDS_CONFIRM)}}


async def _late_window(computer: Computer) -> bool:
    assert not (await computer.call_tool("add", {"a": 1, "b": 2})).is_error
    resources, _ = await computer.list_resources("desk")
    return any(str(r["uri"]).endswith("/late") for r in resources)


class HeldConfirm:
    """A confirmation callback that answers True only when the test releases it."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, request: ConfirmRequest) -> bool:
        self.asked.set()
        await self.release.wait()
        return True


async def test_the_calls_timeout_answers_4004_while_the_question_is_open(servers: Any) -> None:
    held = HeldConfirm()
    async with Computer(_config(servers), name="box", confirm=held) as computer:
        # Before the fix the call waited for the answer however long it took.
        result = await asyncio.wait_for(
            computer.call_tool("add_window", {"path": "late"}, timeout=0.5), 60
        )
        assert result.is_error and result.meta is not None
        assert result.meta["error_code"] == 4004 and result.meta["confirmation"] == "timed_out"
        assert "waiting for confirmation" in result.content[0]["text"]
        held.release.set()
        assert not await _late_window(computer)
        assert computer.history[-1].tool == "add"  # the refused call never ran


async def test_a_cancel_withdraws_the_question_and_a_late_yes_runs_nothing(
    servers: Any,
) -> None:
    held = HeldConfirm()
    async with Computer(_config(servers), name="box", confirm=held) as computer:
        call = asyncio.ensure_future(
            computer.call_tool("add_window", {"path": "late"}, timeout=600, req_id="r1")
        )
        await asyncio.wait_for(held.asked.wait(), 60)
        assert computer.cancel("r1")
        result = await asyncio.wait_for(call, 60)
        assert result.is_error and result.meta is not None
        assert result.meta["a2c_cancelled"] is True and "error_code" not in result.meta
        held.release.set()
        assert not await _late_window(computer)


async def test_the_console_prompt_never_reads_without_a_foreground_terminal() -> None:
    from a2c_computer._toolcalls._confirm import ConsoleConfirmer

    def must_not_read(question: str) -> str:
        raise AssertionError("read from a background terminal")

    request = ConfirmRequest("r", "ag", "desk", "echo", "echo", {})
    allow = ConsoleConfirmer(must_not_read, can_ask=lambda: False, fallback=True)
    deny = ConsoleConfirmer(must_not_read, can_ask=lambda: False, fallback=False)
    assert await allow(request) is True and await deny(request) is False


async def test_nobody_to_ask_refuses_4005_with_the_way_to_allow(servers: Any) -> None:
    """``--confirm ask`` without a terminal fails closed."""
    from a2c_computer._toolcalls._confirm import ConsoleConfirmer

    def must_not_read(question: str) -> str:
        raise AssertionError("read without a terminal")

    no_terminal = ConsoleConfirmer(must_not_read, can_ask=lambda: False)
    async with Computer(_config(servers), name="box", confirm=no_terminal) as computer:
        result = await computer.call_tool("add_window", {"path": "late"}, timeout=30)
        assert result.is_error and result.meta is not None
        assert result.meta["error_code"] == 4005
        text = result.content[0]["text"]
        assert "cannot ask" in text and "--confirm allow" in text and "auto_apply: true" in text
        assert not await _late_window(computer)  # it never ran


async def test_a_second_cancel_keeps_the_first_reason(servers: Any) -> None:
    held = HeldConfirm()
    async with Computer(_config(servers), name="box", confirm=held) as computer:
        call = asyncio.ensure_future(
            computer.call_tool("add_window", {"path": "late"}, timeout=600, req_id="r2")
        )
        await asyncio.wait_for(held.asked.wait(), 60)
        assert computer.cancel("r2", reason="agent_requested")
        assert not computer.cancel("r2", reason="agent_gone")
        result = await asyncio.wait_for(call, 60)
        assert result.meta is not None and result.meta["a2c_cancel_reason"] == "agent_requested"


def test_a_cancel_notice_names_agent_gone_or_nothing_else() -> None:
    from a2c_computer._server_link._link_calls import notice_reason

    assert notice_reason({"agent": "a", "req_id": "r", "a2c_cancel_reason": "agent_gone"}) == (
        "agent_gone"
    )
    for other in ({"agent": "a", "req_id": "r"}, {"a2c_cancel_reason": "computer_shutdown"},
                  {"a2c_cancel_reason": 5}, None):  # fmt: skip
        assert notice_reason(other) == "agent_requested"
