"""Codec benchmark: decode/encode cost of the hot-path payloads, as ratios in one run.

Run: ``uv run python tools/bench/bench_codec.py``. Reports microseconds per operation and
the ratio against two references measured in the same process: ``json.loads`` alone (the
floor any decoder pays) and pydantic v2 validating the same shape (the library other
implementations use). Ratios, not absolute numbers, are what stay comparable across a
noisy 2-core machine.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from a2c_protocol import CallToolResult, GetToolsRet, ToolCallReq, from_wire, to_wire

TOOL_CALL = {
    "agent": "planner",
    "req_id": "6f1c0b9e-2a1d-4a43-9c1e-0d5f3c9a7b11",
    "computer": "build-box-7",
    "tool_name": "repo_grep",
    "params": {"pattern": "TODO", "paths": ["src", "tests"], "max": 50},
    "timeout": 45,
}
RESULT = {
    "content": [{"type": "text", "text": "3 matches\n" + "x" * 200}],
    "isError": False,
    "meta": {"mcp_server": "repo-tools"},
}
TOOLS = {
    "tools": [
        {
            "name": f"tool_{i}",
            "description": "does a thing",
            "params_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
            "return_schema": None,
            "meta": {"a2c_tool_meta": '{"auto_apply": true, "tags": ["x"]}'},
        }
        for i in range(50)
    ],
    "req_id": "r",
}


def timeit(fn: Callable[[], object], rounds: int = 7, number: int = 2000) -> float:
    """Best-of-rounds microseconds per call (the minimum is the least noisy estimate)."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number * 1e6)
    return min(samples)


def pydantic_models() -> dict[str, Any]:
    from pydantic import BaseModel, ConfigDict, Field

    class PToolCall(BaseModel):
        model_config = ConfigDict(strict=True, frozen=True)
        agent: str
        req_id: str
        computer: str
        tool_name: str
        params: dict[str, Any]
        timeout: int

    class PResult(BaseModel):
        model_config = ConfigDict(frozen=True, populate_by_name=True)
        content: list[dict[str, Any]]
        is_error: bool = Field(False, alias="isError")
        meta: dict[str, Any] | None = None

    class PTool(BaseModel):
        model_config = ConfigDict(strict=True, frozen=True)
        name: str
        description: str
        params_schema: dict[str, Any]
        return_schema: dict[str, Any] | None
        meta: dict[str, Any] | None = None

    class PTools(BaseModel):
        model_config = ConfigDict(strict=True, frozen=True)
        tools: list[PTool]
        req_id: str

    return {"tool_call": PToolCall, "result": PResult, "tools": PTools}


def main() -> None:
    cases: list[tuple[str, type[Any], dict[str, Any], str]] = [
        ("ToolCallReq", ToolCallReq, TOOL_CALL, "tool_call"),
        ("CallToolResult", CallToolResult, RESULT, "result"),
        ("GetToolsRet (50 tools)", GetToolsRet, TOOLS, "tools"),
    ]
    try:
        references = pydantic_models()
    except ImportError:
        references = {}
    print(
        f"{'payload':<24}{'decode µs':>11}{'encode µs':>11}{'÷ json.loads':>14}{'÷ pydantic':>12}"
    )
    for label, model, data, key in cases:
        text = json.dumps(data)
        decode = timeit(partial(from_wire, model, data))
        obj: Any = from_wire(model, data)
        encode = timeit(partial(to_wire, obj))
        floor = timeit(partial(json.loads, text))
        ratio_pyd = "n/a"
        if key in references:
            ref = references[key]
            pyd = timeit(partial(ref.model_validate, data))
            ratio_pyd = f"{decode / pyd:.2f}"
        print(f"{label:<24}{decode:>11.2f}{encode:>11.2f}{decode / floor:>14.2f}{ratio_pyd:>12}")
    spread = [timeit(lambda: from_wire(ToolCallReq, TOOL_CALL), rounds=1) for _ in range(5)]
    print(
        f"\nnoise: ToolCallReq decode varied {min(spread):.2f}..{max(spread):.2f} µs "
        f"(median {statistics.median(spread):.2f}) across 5 single rounds"
    )


if __name__ == "__main__":
    main()
