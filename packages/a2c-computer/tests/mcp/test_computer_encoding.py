"""A lone surrogate in tool arguments fails its own call only.

``{"text": "\\udcff"}`` is valid JSON, but the MCP stdio writer cannot encode it; before the
fix its failure tore the session down and every unrelated call in flight failed with it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from a2c_computer import Computer
from a2c_computer._mcp import McpCallFailure
from a2c_computer._toolcalls._encoding import unencodable_field

LONE = "\udcff"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"text": LONE}, "argument text "),
        ({"a": {"b": ["ok", f"x{LONE}"]}}, "argument a.b[1] "),
        ({f"k{LONE}": 1}, "an argument name under (root)"),
    ],
)
def test_the_offending_field_is_named(arguments: dict[str, Any], field: str) -> None:
    found = unencodable_field(arguments)
    assert found is not None and found.startswith(field), found


def test_valid_unicode_passes() -> None:
    assert unencodable_field({"t": "żółw 🐢", "n": [1, None, True], "d": {"x": "\u2028"}}) is None


async def _slow_calls(computer: Computer, markers: list[Path], wait: Any) -> list[Any]:
    calls = [
        asyncio.ensure_future(
            computer.call_tool("slow", {"seconds": 2, "marker": str(marker)}, timeout=60)
        )
        for marker in markers
    ]
    await wait(lambda: all(m.exists() for m in markers), what="slow calls started")
    return calls


async def test_a_lone_surrogate_fails_only_its_call(
    tmp_path: Path, servers: Any, wait: Any
) -> None:
    config = {"servers": {"desk": servers.desk()}}
    async with Computer(config, name="box") as computer:
        markers = [tmp_path / f"m{i}" for i in range(10)]
        calls = await _slow_calls(computer, markers, wait)
        bad = await computer.call_tool("echo", {"text": LONE}, timeout=30)
        assert bad.is_error and bad.meta is not None and bad.meta["error_code"] == 4003
        assert "argument text" in bad.content[0]["text"]
        results = await asyncio.gather(*calls)
        assert [r.is_error for r in results] == [False] * 10, results
        assert computer.server_states()["desk"].restarts == 0
        assert not (await computer.call_tool("echo", {"text": "still up"})).is_error


async def test_an_encoding_failure_inside_the_session_fails_only_that_request(
    tmp_path: Path, servers: Any, wait: Any
) -> None:
    """Below the argument check: whatever cannot be encoded fails at its own send."""
    config = {"servers": {"desk": servers.desk()}}
    async with Computer(config, name="box") as computer:
        server = computer.server("desk")
        assert server is not None
        markers = [tmp_path / f"m{i}" for i in range(5)]
        calls = await _slow_calls(computer, markers, wait)
        with pytest.raises(McpCallFailure, match="cannot be encoded"):
            await server.call_tool("echo", {"text": LONE}, timeout=30)
        results = await asyncio.gather(*calls)
        assert [r.is_error for r in results] == [False] * 5, results
        assert computer.server_states()["desk"].restarts == 0
