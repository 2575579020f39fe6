"""``a2c-agent watch``: print an office's notifications as they arrive.

For debugging a live deployment: every ``notify:*`` (a member entering or leaving, a
tool list, desktop or config change, a cancel) becomes one line, flushed at once; lost and
restored connections are reported on stderr. JSON mode prints one JSON object per line
(``{"time", "event", "data"}``), table mode one readable line.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from a2c_agent._session._lifecycle import AgentState
from a2c_agent._types import AgentNotification
from a2c_protocol import to_wire

from ._args import EXIT_ERROR, EXIT_OK
from ._visible import visible

if TYPE_CHECKING:
    from a2c_agent._agent import AsyncAgent

__all__ = ["notification_json", "notification_line", "watch"]


def notification_json(notification: AgentNotification, when: dt.datetime) -> dict[str, Any]:
    """The JSON line for one notification."""
    return {
        "time": when.isoformat(timespec="milliseconds"),
        "event": notification.event.value,
        "data": to_wire(notification.payload),
    }


def notification_line(notification: AgentNotification, when: dt.datetime) -> str:
    """The readable line for one notification: time, event, then ``key=value`` fields
    (peers' names and values with their control characters shown escaped)."""
    data = to_wire(notification.payload)
    fields = " ".join(
        visible(
            f"{key}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}",
            one_line=True,
        )
        for key, value in (data.items() if isinstance(data, dict) else ())
        if value is not None
    )
    return f"{when.strftime('%H:%M:%S')}  {notification.event.value}  {fields}".rstrip()


def _reporter(agent: AsyncAgent) -> Callable[[AgentState, AgentState], None]:
    def report(old: AgentState, new: AgentState) -> None:
        _report_state(old, new, agent.last_cut, agent.office_id)

    return report


def _report_state(
    old: AgentState, new: AgentState, cut: str | None, office: str | None = None
) -> None:
    if new is AgentState.RECONNECTING:
        if cut is not None:  # the Server said why (notify:a2c_session_expired)
            fresh = " with a fresh token" if "token" in cut else ""  # not for a shutdown
            print(f"a2c-agent: disconnected by the Server: {cut}; reconnecting{fresh}",
                  file=sys.stderr, flush=True)  # fmt: skip
        else:
            print("a2c-agent: connection lost; reconnecting", file=sys.stderr, flush=True)
    elif old is AgentState.RECONNECTING and new is AgentState.CONNECTED:
        # CONNECTED again only once back in the office (a held name is waited out first,
        # and said on stderr by the SDK's WARNING).
        back = f"; back in office {office!r}" if office is not None else ""
        print(f"a2c-agent: reconnected{back}", file=sys.stderr, flush=True)


async def watch(
    agent: AsyncAgent,
    *,
    out: TextIO,
    as_table: bool,
    count: int | None,
    duration: float | None,
) -> int:
    """Print notifications until Ctrl-C, ``count`` of them, ``duration`` seconds, or the end."""
    stream = agent.notifications()
    agent.add_state_listener(_reporter(agent))
    print(
        f"a2c-agent: watching office {agent.office_id!r} (Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    seen = 0
    try:
        async with asyncio.timeout(duration):
            async for notification in stream:
                now = dt.datetime.now(dt.UTC)
                if as_table:
                    line = notification_line(notification, now.astimezone())
                else:
                    line = json.dumps(notification_json(notification, now), ensure_ascii=False)
                print(line, file=out, flush=True)
                seen += 1
                if count is not None and seen >= count:
                    return EXIT_OK
    except TimeoutError:
        return EXIT_OK
    finally:
        stream.close()
    # The stream ended on its own: the agent closed (a refusal while reconnecting).
    reason = agent.last_error or "the connection ended"
    print(f"a2c-agent: error: stopped watching: {reason}", file=sys.stderr)
    return EXIT_ERROR
