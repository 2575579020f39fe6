"""An Agent's rounds of one tool call that may ask, spoken on the wire by hand.

``Caller(client, tool)`` drives a :class:`~a2c_testkit.server.RawClient` joined as the Agent
``alice`` calling the Computer ``box``: :meth:`Caller.call` makes a round (declaring
``a2c_input`` unless ``takes`` is None), :meth:`Caller.answer` the retry with answers and
the last state. What is checked is exactly what the Agent is sent.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from a2c_computer import Computer
from a2c_protocol import Event, InputCapabilities

from .server import RawClient, connect_raw, running_server

__all__ = ["ALL", "Caller", "asking_office", "only", "text"]

#: Every kind of input declared.
ALL = InputCapabilities().to_wire()


@contextlib.asynccontextmanager
async def asking_office(
    servers: Mapping[str, Any], **computer: Any
) -> AsyncIterator[tuple[Computer, RawClient]]:
    """A real Server, the Computer ``box`` (in-process, ``computer`` its keyword arguments)
    hosting ``servers`` (config entries by name), and the raw Agent ``alice``, in office
    ``o1``: yields (the Computer, alice)."""
    async with (
        running_server() as srv,
        Computer({"servers": dict(servers)}, name="box", server_url=srv.url, office_id="o1",
                 socketio_path=srv.socketio_path, **computer) as box,
        connect_raw(srv, "agent") as alice,
    ):  # fmt: skip
        assert box.link is not None
        await box.link.wait_joined()
        assert await alice.join("agent", "alice", "o1") == (True, None)
        yield box, alice


class Caller:
    """One Agent's calls of one tool, round after round."""

    def __init__(self, client: RawClient, tool: str, params: dict[str, Any] | None = None,
                 takes: dict[str, Any] | None = ALL, *, agent: str = "alice",
                 computer: str = "box") -> None:  # fmt: skip
        self.client, self.tool, self.params, self.takes = client, tool, params or {}, takes
        self.agent, self.computer = agent, computer
        self.rounds = 0
        self.state: str | None = None

    def request(self, **extra: Any) -> dict[str, Any]:
        self.rounds += 1
        req = {"agent": self.agent, "computer": self.computer,
               "req_id": f"{self.tool}-{self.rounds}", "tool_name": self.tool,
               "params": self.params, "timeout": 30}  # fmt: skip
        if self.takes is not None:
            req["a2c_input"] = self.takes
        return {**req, **extra}

    async def call(self, **extra: Any) -> Any:
        answer = await self.client.call(Event.TOOL_CALL, self.request(**extra), timeout=60)
        if isinstance(answer, dict) and answer.get("resultType") == "input_required":
            self.state = answer["requestState"]
        return answer

    async def answer(self, responses: dict[str, Any], **extra: Any) -> Any:
        keys = {"a2c_request_state": self.state, "a2c_input_responses": responses}
        return await self.call(**{**keys, **extra})


def text(answer: Any) -> str:
    """The first text of a tool result."""
    assert isinstance(answer, dict) and "content" in answer, answer
    value: str = answer["content"][0]["text"]
    return value


def only(answer: Any) -> tuple[str, dict[str, Any]]:
    """The one input request of an input-required answer: (key, request)."""
    assert answer["resultType"] == "input_required", answer
    ((key, request),) = answer["inputRequests"].items()
    return key, request
