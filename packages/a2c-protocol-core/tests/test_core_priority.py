"""Priority reading, the v0.1 → v0.2 conversion (seed §7) and the MCP-server helper."""

import logging
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_protocol import (
    InvalidPriorityError,
    InvalidWindowURIError,
    migrate_v01_window,
    priority_from_v01,
    read_fullscreen,
    read_priority,
    window_resource,
)


@pytest.mark.parametrize(("v01", "v02"), [(100, 1.0), (80, 0.8), (50, 0.5), (30, 0.3), (0, 0.0)])
def test_seed_conversion_table_is_exact(v01: int, v02: float) -> None:
    assert priority_from_v01(v01) == v02


@given(st.integers(0, 100), st.integers(0, 100))
def test_conversion_is_monotonic_and_bounded(a: int, b: int) -> None:
    pa, pb = priority_from_v01(a), priority_from_v01(b)
    assert 0.0 <= pa <= 1.0
    assert (a <= b) == (pa <= pb)


@given(st.one_of(st.integers(max_value=-1), st.integers(min_value=101)))
def test_conversion_rejects_out_of_range(value: int) -> None:
    with pytest.raises(InvalidPriorityError):
        priority_from_v01(value)


@pytest.mark.parametrize("value", [True, 1.5, "80", None])
def test_conversion_rejects_non_integers(value: object) -> None:
    with pytest.raises(InvalidPriorityError):
        priority_from_v01(value)  # type: ignore[arg-type]


@given(st.floats(0.0, 1.0))
def test_valid_priorities_read_as_is(value: float) -> None:
    assert read_priority(value) == value
    assert read_priority(value, strict=True) == value


@pytest.mark.parametrize("value", [1.01, -0.1, 80, math.nan, math.inf, "0.5", True, [0.5]])
def test_invalid_priority_lenient_warns_and_uses_zero(
    value: object, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="a2c_protocol.window"):
        assert read_priority(value, uri="window://h/x") == 0.0
    assert caplog.records and "window://h/x" in caplog.records[0].getMessage()
    with pytest.raises(InvalidPriorityError):
        read_priority(value, strict=True)


def test_missing_priority_is_zero_without_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="a2c_protocol.window"):
        assert read_priority(None) == 0.0
    assert not caplog.records


def test_v01_integer_priority_hint() -> None:
    with pytest.raises(InvalidPriorityError, match="priority_from_v01"):
        read_priority(80, strict=True)


def test_read_fullscreen(caplog: pytest.LogCaptureFixture) -> None:
    assert read_fullscreen(True) is True
    assert read_fullscreen(None) is False
    with caplog.at_level(logging.WARNING, logger="a2c_protocol.window"):
        assert read_fullscreen("true") is False
    assert caplog.records


def test_migrate_v01_window_example() -> None:
    uri, annotations, meta = migrate_v01_window("window://h/p?priority=80&fullscreen=1")
    assert (uri, annotations, meta) == ("window://h/p", {"priority": 0.8}, {"fullscreen": True})


def test_migrate_without_query_gives_empty_metadata() -> None:
    assert migrate_v01_window("window://com.example.app/main") == (
        "window://com.example.app/main",
        {},
        {},
    )


def test_migrate_accepts_a_semantic_mapping() -> None:
    _, annotations, _ = migrate_v01_window("window://h/p?priority=8", mapping=lambda p: p / 10)
    assert annotations == {"priority": 0.8}


@given(st.integers(0, 100), st.booleans())
def test_migrate_agrees_with_the_conversion(priority: int, fullscreen: bool) -> None:
    flag = "1" if fullscreen else "0"
    uri, annotations, meta = migrate_v01_window(
        f"window://h/a?fullscreen={flag}&priority={priority}"
    )
    assert uri == "window://h/a"
    assert annotations == {"priority": priority_from_v01(priority)}
    assert meta == {"fullscreen": fullscreen}


@pytest.mark.parametrize(
    "uri",
    ["window://h/p?priority=101", "window://h/p?priority=high", "window://h/p?fullscreen=maybe"],
)
def test_migrate_rejects_bad_v01_values(uri: str) -> None:
    with pytest.raises((InvalidPriorityError, InvalidWindowURIError)):
        migrate_v01_window(uri)


def test_window_resource_declares_v02_metadata() -> None:
    resource = window_resource(
        "window://org.example.term/session/3",
        "Terminal 3",
        priority=0.7,
        last_modified="2026-03-02T10:15:00Z",
        fullscreen=False,
    )
    assert resource == {
        "uri": "window://org.example.term/session/3",
        "name": "Terminal 3",
        "mimeType": "text/plain",
        "annotations": {
            "priority": 0.7,
            "audience": ["assistant"],
            "lastModified": "2026-03-02T10:15:00Z",
        },
        "_meta": {"fullscreen": False},
    }


@pytest.mark.parametrize(
    ("uri", "kwargs"),
    [
        ("window://h/p?priority=80", {}),
        ("window://h/p", {"priority": 80}),
        ("window://h/p", {"fullscreen": 1}),
        ("window://h/p", {"audience": ["robot"]}),
    ],
)
def test_window_resource_refuses_v01_forms(uri: str, kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        window_resource(uri, "x", **kwargs)  # type: ignore[arg-type]
