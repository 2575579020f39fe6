"""Mixed offices: a 0.2 Agent and a 0.4 Computer (or the reverse) served by translation.

The forwarder asks :func:`mixed` once per request (two string splits); only when the two
parties are on different protocol lines does the request take :func:`translated`, which
puts the request into the Computer's shapes and the answer into the Agent's with the pure
functions of :mod:`a2c_protocol._lines`. A pure office's relay never comes here, so its
bytes and cost are unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from a2c_protocol._lines import Line, line_of, translate_answer, translate_request

__all__ = ["line_label", "mixed", "translated"]


def mixed(agent_version: str, computer_version: str) -> bool:
    """Whether two sessions speak different MAJOR.MINOR lines (their PATCH is free)."""
    return agent_version.rpartition(".")[0] != computer_version.rpartition(".")[0]


def line_label(version: str) -> str:
    """The ``protocol`` metric label of a session: its line, or ``other``."""
    return line_of(version) or "other"


async def translated(
    event: str,
    data: Any,
    *,
    agent_version: str,
    computer_version: str,
    call: Callable[[Any], Awaitable[Any]],
) -> Any:
    """Relay ``data`` through ``call`` (which asks the Computer), translating both ways."""
    agent: Line | None = line_of(agent_version)
    computer: Line | None = line_of(computer_version)
    if agent is None or computer is None:
        # A version outside the known lines (a pinned deployment): relay as before.
        return await call(data)
    request = translate_request(event, data, agent=agent, computer=computer)
    answer = await call(request)
    return translate_answer(event, answer, agent=agent, computer=computer)
