"""The Server's packet codec writes exactly what the standard library writes."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from a2c_server import _json

COMPACT = (",", ":")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.sampled_from([1e-05, 2.5e-07, 1e16, 1e22, -0.0, math.nan, math.inf, -math.inf])
    | st.text()
    | st.text(alphabet=st.characters(max_codepoint=127)),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=25,
)


@given(json_values)
def test_server_json_dumps_is_byte_identical_to_the_standard_library(value: Any) -> None:
    assert _json.dumps(value, separators=COMPACT) == json.dumps(value, separators=COMPACT)


def test_server_json_covers_the_cases_orjson_writes_differently() -> None:
    cases: list[Any] = [
        {"text": "héllo 文字 \udcff"},  # non-ASCII and a lone surrogate
        {"del": "a\x7fb"},  # DEL is ASCII, but the standard library escapes it
        {"priority": 1e-05, "small": 2.5e-07, "tiny": 5e-324},
        {"nan": math.nan, "inf": math.inf},
        {"big": 2**64, "neg": -(2**63) - 1},
        {1: "integer key"},
        {"req_id": "r" * 50, "timeout": 30, "params": {"text": "hi"}, "meta": None},
    ]
    for case in cases:
        assert _json.dumps(case, separators=COMPACT) == json.dumps(case, separators=COMPACT)


def test_server_json_other_arguments_use_the_standard_library() -> None:
    value = {"b": 1, "a": [1.5, "x"]}
    assert _json.dumps(value) == json.dumps(value)
    assert _json.dumps(value, sort_keys=True, indent=2) == json.dumps(
        value, sort_keys=True, indent=2
    )
    assert _json.loads('{"n": 123456789012345678901234567890}') == {
        "n": 123456789012345678901234567890
    }


def test_server_json_uses_orjson_where_installed() -> None:
    assert _json.FAST
