"""Example stdio MCP server whose tool asks the user: an input request through an office.

Run it through a Computer config entry (the interpreter of the venv that has
``a2c-computer``)::

    {"type": "stdio", "name": "helpdesk",
     "server_parameters": {"command": "/path/to/venv/bin/python",
                           "args": ["-m", "a2c_computer.examples.ask_server"]}}

Tool: ``book_meeting {"topic": ...}`` asks the user, with an MCP elicitation form, for the
day and the length of the meeting, and answers what it booked, or that nothing was booked
when the user declined or cancelled (a refusal, e.g. by an Agent that takes no input
requests, ends the call with an error naming it).

It asks through the MCP SDK's era-agnostic resolver (``Annotated[T, Resolve(fn)]`` returning
``Elicit``), so the same tool works whichever MCP era its client speaks: a server-initiated
``elicitation/create`` in the handshake era, an ``input_required`` result in 2026-07-28. An
Agent that takes input requests answers it through the office (docs/agent.md, "Tools that
ask"); for any other Agent the Computer refuses the request on its behalf.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel, Field

__all__ = ["Slot", "build_server", "main"]


class Slot(BaseModel):
    """The form the user fills in (MCP forms take flat, primitive fields only)."""

    day: str = Field(description="day of the meeting, e.g. 2026-12-08")
    minutes: int = Field(default=30, description="length in minutes")


async def _ask_slot() -> Elicit[Slot]:
    return Elicit("When should the meeting be, and how long?", Slot)


def build_server() -> MCPServer:
    """The server with its one tool (separate from :func:`main` so tests can serve it)."""
    server = MCPServer("a2c-example-helpdesk", version="1.0.0")

    @server.tool()
    async def book_meeting(
        topic: str, answer: Annotated[ElicitationResult[Slot], Resolve(_ask_slot)]
    ) -> str:
        """Book a meeting on a topic; asks the user for the day and the length."""
        if not isinstance(answer, AcceptedElicitation):
            return f"nothing booked: the user chose {answer.action}"
        slot = answer.data
        return f"booked {slot.minutes} min on {slot.day}: {topic}"

    return server


def main() -> None:
    """Serve over stdio until the client closes the pipe."""
    build_server().run("stdio")


if __name__ == "__main__":
    main()
