"""The size screen's shortcut: the packet's text bounds what its decoded value can hold.

``payload_problems(args, text=...)`` must find exactly what the full walk finds; the counts
on the text only decide when the walk can be skipped.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2c_server._state._limits import MAX_NESTING, payload_problems


def nested(depth: int) -> Any:
    value: Any = "x"
    for index in range(depth):
        value = [value] if index % 2 else {"k": value}
    return value


def packet_text(args: list[Any]) -> str:
    return "42/smcp,7" + json.dumps(["client:tool_call", *args], separators=(",", ":"))


CASES = [
    [{"agent": "a", "req_id": "r", "params": {"text": "hi"}}],
    [{"agent": "a", "req_id": "r" * 300}],  # an identifier over the limit
    [{"agent": "a", "req_id": "\u00e9" * 200}],  # escaped: the text is longer than the string
    [{"agent": "a", "params": {"text": "y" * 1000}}],  # long text, short identifiers
    [nested(MAX_NESTING - 2)],
    [nested(MAX_NESTING)],  # the deepest accepted
    [nested(MAX_NESTING + 1)],  # one level too deep
    [{"params": "[[[[{{{{" * 20}],  # brackets inside a string: a false alarm, not a miss
    ["a", "b"],
]


@pytest.mark.parametrize("args", CASES)
def test_the_text_shortcut_finds_what_the_walk_finds(args: list[Any]) -> None:
    walked = payload_problems(args, max_id_length=256)
    assert payload_problems(args, max_id_length=256, text=packet_text(args)) == walked


def test_both_refusals_are_still_found_with_the_text() -> None:
    deep = [nested(MAX_NESTING + 1)]
    assert payload_problems(deep, max_id_length=256, text=packet_text(deep))[0].path == "$"
    long = [{"req_id": "r" * 300}]
    problems = payload_problems(long, max_id_length=256, text=packet_text(long))
    assert [p.path for p in problems] == ["$.req_id"]
