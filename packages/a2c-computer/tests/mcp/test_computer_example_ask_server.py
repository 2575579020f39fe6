"""The example MCP server whose tool asks the user (a2c_computer.examples.ask_server; the demo's).

Served in process to the MCP SDK's own client in both eras: the era-agnostic resolver
asks by a server-initiated request in the handshake era and by an ``input_required``
result in 2026-07-28, and the tool's answer follows what the user chose.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import types
from mcp.client import Client

from a2c_computer.examples.ask_server import build_server


def _answering(action: str, content: dict[str, Any] | None = None) -> Any:
    asked: list[types.ElicitRequestParams] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    answer.asked = asked  # type: ignore[attr-defined]
    return answer


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(
    ("action", "content", "said"),
    [
        ("accept", {"day": "2026-12-08", "minutes": 45}, "booked 45 min on 2026-12-08: review"),
        ("accept", {"day": "2026-12-09"}, "booked 30 min on 2026-12-09: review"),
        ("decline", None, "nothing booked: the user chose decline"),
        ("cancel", None, "nothing booked: the user chose cancel"),
    ],
)
async def test_book_meeting_asks_for_a_slot_in_both_eras(
    mode: str, action: str, content: dict[str, Any] | None, said: str
) -> None:
    answer = _answering(action, content)
    async with Client(build_server(), mode=mode, elicitation_callback=answer) as client:
        result = await client.call_tool("book_meeting", {"topic": "review"})
        era = client.protocol_version
    assert (era == "2026-07-28") is (mode == "auto")
    assert not result.is_error, result
    assert _text(result) == said
    (params,) = answer.asked
    assert params.message == "When should the meeting be, and how long?"
    assert set(params.requested_schema["properties"]) == {"day", "minutes"}
