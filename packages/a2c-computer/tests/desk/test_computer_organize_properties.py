"""Property tests of the organize algorithm: its rules hold for any input."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from a2c_computer import CallRecord, describe_window, organize

SERVERS = ["alpha", "bravo", "charlie", "delta"]

window_st = st.tuples(
    st.sampled_from(SERVERS),
    st.one_of(st.none(), st.floats(0, 1), st.integers(-5, 200)),
    st.booleans(),
    st.sampled_from(["text", "blob", "empty"]),
)


def build(specs: list[tuple[str, Any, bool, str]]) -> list[tuple[Any, Any]]:
    out = []
    for i, (server, priority, full, kind) in enumerate(specs):
        resource: dict[str, Any] = {
            "uri": f"window://org.{server}/w{i}",
            "_meta": {"fullscreen": full},
        }
        if priority is not None:
            resource["annotations"] = {"priority": priority}
        info = describe_window(server, resource)
        contents = {"text": [{"text": f"w{i}"}], "blob": [{"blob": "AA"}], "empty": []}[kind]
        out.append((info, contents))
    return out


@given(
    st.lists(window_st, max_size=12),
    st.one_of(st.none(), st.integers(-2, 14)),
    st.lists(st.sampled_from([*SERVERS, "ghost"]), max_size=6),
)
def test_organize_rules_hold(specs: list[Any], size: int | None, used: list[str]) -> None:
    windows = build(specs)
    history = [CallRecord(s, "t", f"r{i}", float(i), True) for i, s in enumerate(used)]
    out = organize(windows, size, history)
    if size is not None and size <= 0:
        assert out == []
        return
    if size is not None:
        assert len(out) <= size
    visible = [(w, c) for w, c in windows if c and any("text" in x for x in c)]
    by_server: dict[str, list[Any]] = {}
    for pos, (info, _) in enumerate(windows):
        if (info, _) in visible:
            by_server.setdefault(info.server, []).append((pos, info))
    recent: list[str] = []
    for s in reversed(used):
        if s in by_server and s not in recent:
            recent.append(s)
    order = recent + sorted(s for s in by_server if s not in recent)
    expected: list[str] = []
    for server in order:
        items = sorted(by_server[server], key=lambda w: -w[1].priority)
        full = [w for w in items if w[1].fullscreen]
        chosen = [min(full, key=lambda w: w[0])] if full else items
        expected += [str(w[1].uri) for w in chosen]
    if size is not None:
        expected = expected[:size]
    assert [entry.split("\n", 1)[0] for entry in out] == expected
