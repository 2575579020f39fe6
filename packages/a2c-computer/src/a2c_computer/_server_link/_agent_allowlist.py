"""``--allow-agent``: the Agents this Computer answers, whatever the Server lets through.

Defense in depth: the Server already keeps other offices' Agents out, but a Computer that
holds someone's files and shell should not depend on the Server alone. The check uses the
request's ``agent`` field, which the Server guarantees is the sender's registered name (a
name that a JWT grant can bind to one identity).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from a2c_protocol import ErrorCode, ErrorPayload, to_wire

__all__ = ["AgentAllowList"]

logger = logging.getLogger("a2c_computer.link")


class AgentAllowList:
    """The names of the Agents allowed to send ``client:*`` requests to this Computer."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(name.strip() for name in names if name.strip())
        if not self.names:
            raise ValueError("the allow-list of Agents must name at least one Agent")

    def allows(self, agent: object) -> bool:
        return isinstance(agent, str) and agent in self.names

    def refusal(self, event: str, data: Any) -> dict[str, Any] | None:
        """A flat 403 for a request from an Agent not on the list (None: allowed)."""
        agent = data.get("agent") if isinstance(data, Mapping) else None
        if self.allows(agent):
            return None
        logger.warning("refused %s from Agent %r: not in --allow-agent", event, agent)
        shown = agent if isinstance(agent, str) else None
        message = f"Agent {shown!r} is not allowed to use this Computer"
        wire: dict[str, Any] = to_wire(ErrorPayload(code=ErrorCode.FORBIDDEN, message=message))
        return wire

    def __repr__(self) -> str:
        return f"AgentAllowList({sorted(self.names)!r})"
