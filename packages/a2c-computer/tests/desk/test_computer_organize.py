"""The organize algorithm and window metadata rules, as pure functions (seed §6.1, §6.2)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from a2c_computer import CallRecord, describe_window, organize, render_window
from a2c_computer._desk._desktop import select_window
from a2c_protocol import InvalidWindowURIError, WindowURI, migrate_v01_window


def res(
    uri: str, priority: Any = None, fullscreen: Any = None, audience: Any = ("assistant",)
) -> dict[str, Any]:
    r: dict[str, Any] = {"uri": uri, "name": uri}
    ann: dict[str, Any] = {}
    if priority is not None:
        ann["priority"] = priority
    if audience is not None:
        ann["audience"] = list(audience)
    if ann:
        r["annotations"] = ann
    if fullscreen is not None:
        r["_meta"] = {"fullscreen": fullscreen}
    return r


def text(body: str) -> list[dict[str, Any]]:
    return [{"uri": "x", "text": body}]


def win(server: str, resource: dict[str, Any], contents: Any = "body") -> tuple[Any, Any]:
    info = describe_window(server, resource)
    assert info is not None
    return info, (text(contents) if isinstance(contents, str) else contents)


def heads(desktop: list[str]) -> list[str]:
    return [entry.split("\n", 1)[0] for entry in desktop]


def rec(server: str, t: float) -> CallRecord:
    return CallRecord(server=server, tool="t", req_id=f"r{t}", timestamp=t, success=True)


# -- seed §6.1: the lenient parser of the Computer -------------------------------------


def test_seed_6_1_window_uri_parses() -> None:
    info = describe_window("s", res("window://host/path"))
    assert info is not None
    assert info.uri == WindowURI("host", ("path",))


def test_seed_6_1_query_is_dropped_with_a_warning_never_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        info = describe_window("s", res("window://host/path?priority=5"))
    assert info is not None
    assert str(info.uri) == "window://host/path"
    assert info.priority == 0.0  # never read from the URI
    assert "query" in caplog.text
    out = organize([(info, text("hello"))], None, [])
    assert out == ["window://host/path\n\nhello"]


def test_seed_6_1_agent_side_construction_with_query_is_a_hard_error() -> None:
    with pytest.raises(InvalidWindowURIError):
        WindowURI.parse("window://host/path?priority=5")


def test_fragment_is_dropped_like_a_query() -> None:
    info = describe_window("s", res("window://host/p#frag"))
    assert info is not None and str(info.uri) == "window://host/p"


def test_non_window_and_invalid_uris_are_not_windows() -> None:
    assert describe_window("s", res("file:///tmp/x")) is None
    assert describe_window("s", res("window://")) is None
    assert describe_window("s", res("window://user@host/x")) is None


# -- seed §6.2: same order for v0.1-described and v0.2-described windows -------------------


def test_seed_6_2_v01_and_v02_descriptions_organize_identically() -> None:
    v01 = {
        "a": [
            "window://org.a.app/main?priority=30",
            "window://org.a.app/side?priority=80",
            "window://org.a.app/log",
            "window://org.a.app/big?priority=50&fullscreen=0",
        ],
        "b": [
            "window://org.b.app/x?priority=10",
            "window://org.b.app/full?priority=20&fullscreen=1",
            "window://org.b.app/y?priority=90&fullscreen=1",
        ],
        "c": ["window://org.c.app/one?priority=100", "window://org.c.app/two?priority=0"],
    }
    history = [rec("c", 1), rec("a", 2)]

    def v02_windows() -> list[tuple[Any, Any]]:
        out = []
        for server, uris in v01.items():
            for uri in uris:
                pure, annotations, meta = migrate_v01_window(uri)
                resource: dict[str, Any] = {
                    "uri": pure,
                    "annotations": {**annotations, "audience": ["assistant"]},
                }
                if meta:
                    resource["_meta"] = meta
                out.append(win(server, resource, pure))
        return out

    def v01_reference() -> list[str]:
        # v0.1 semantics applied to the raw query: integer priority, fullscreen flag.
        from urllib.parse import parse_qs

        order = ["a", "c", "b"]  # most recent first (a, then c), then alphabetical (b)
        out = []
        for server in order:
            items = []
            for pos, uri in enumerate(v01[server]):
                base, _, query = uri.partition("?")
                q = parse_qs(query)
                items.append(
                    (
                        pos,
                        base,
                        int(q.get("priority", ["0"])[0]),
                        q.get("fullscreen", ["0"])[0] == "1",
                    )
                )
            items.sort(key=lambda i: -i[2])
            full = [i for i in items if i[3]]
            chosen = [min(full)] if full else items
            out += [i[1] for i in chosen]
        return out

    assert heads(organize(v02_windows(), None, history)) == v01_reference()
    assert heads(organize(v02_windows(), None, history)) == [
        "window://org.a.app/side",
        "window://org.a.app/big",
        "window://org.a.app/main",
        "window://org.a.app/log",
        "window://org.c.app/one",
        "window://org.c.app/two",
        "window://org.b.app/full",
    ]


# -- every organize rule ----------------------------------------------------------------


@pytest.mark.parametrize("size", [0, -1])
def test_size_zero_or_negative_gives_empty(size: int) -> None:
    assert organize([win("s", res("window://h/a"))], size, []) == []


def test_size_absent_gives_all() -> None:
    windows = [win("s", res(f"window://h/{i}")) for i in range(5)]
    assert len(organize(windows, None, [])) == 5


def test_size_one_with_two_servers_gives_most_recently_used_servers_top_window() -> None:
    windows = [
        win("alpha", res("window://a/low", 0.1)),
        win("beta", res("window://b/low", 0.2)),
        win("beta", res("window://b/top", 0.9)),
    ]
    assert heads(organize(windows, 1, [rec("alpha", 1), rec("beta", 2)])) == ["window://b/top"]


def test_size_cap_is_global_and_can_cut_inside_a_server() -> None:
    windows = [win("a", res(f"window://a/{i}", 0.5)) for i in range(3)] + [
        win("b", res("window://b/0"))
    ]
    assert heads(organize(windows, 2, [])) == ["window://a/0", "window://a/1"]
    assert len(organize(windows, 4, [])) == 4


def test_servers_ordered_by_recent_use_then_alphabetical() -> None:
    windows = [win(s, res(f"window://{s}/w")) for s in ("delta", "alpha", "charlie", "bravo")]
    history = [rec("charlie", 1), rec("bravo", 2), rec("charlie", 3), rec("gone", 4)]
    assert heads(organize(windows, None, history)) == [
        "window://charlie/w",
        "window://bravo/w",
        "window://alpha/w",
        "window://delta/w",
    ]


def test_priority_descending_and_stable_for_ties() -> None:
    windows = [
        win("s", res("window://h/first", 0.5)),
        win("s", res("window://h/missing")),
        win("s", res("window://h/second", 0.5)),
        win("s", res("window://h/top", 1.0)),
    ]
    assert heads(organize(windows, None, [])) == [
        "window://h/top",
        "window://h/first",
        "window://h/second",
        "window://h/missing",
    ]


def test_two_fullscreen_windows_in_one_server_only_the_earlier_listed_one() -> None:
    windows = [
        win("s", res("window://h/normal", 1.0)),
        win("s", res("window://h/full-early", 0.1, True)),
        win("s", res("window://h/full-late", 0.9, True)),
    ]
    assert heads(organize(windows, None, [])) == ["window://h/full-early"]


def test_fullscreen_in_two_servers_gives_one_from_each() -> None:
    windows = [
        win("a", res("window://a/x", 0.9)),
        win("a", res("window://a/full", 0.1, True)),
        win("b", res("window://b/full", 0.1, True)),
        win("b", res("window://b/y", 0.9)),
        win("c", res("window://c/z")),
    ]
    assert heads(organize(windows, None, [])) == [
        "window://a/full",
        "window://b/full",
        "window://c/z",
    ]


def test_out_of_range_and_non_numeric_priority_is_zero_with_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        loud = win("s", res("window://h/loud", 5))
        word = win("s", res("window://h/word", "high"))
        flag = win("s", res("window://h/flag", True))
    assert loud[0].priority == word[0].priority == flag[0].priority == 0.0
    assert caplog.text.count("priority") >= 3
    windows = [loud, win("s", res("window://h/mid", 0.5)), word]
    assert heads(organize(windows, None, [])) == [
        "window://h/mid",
        "window://h/loud",
        "window://h/word",
    ]


def test_user_audience_window_is_kept_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        user = win("s", res("window://h/user", 0.5, audience=["user"]))
    assert "audience" in caplog.text
    assert heads(organize([user], None, [])) == ["window://h/user"]


def test_missing_audience_is_silent(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        describe_window("s", res("window://h/a", 0.5, audience=None))
    assert caplog.text == ""


def test_non_boolean_fullscreen_counts_as_false(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        info = describe_window("s", res("window://h/a", fullscreen="yes"))
    assert info is not None and info.fullscreen is False
    assert "fullscreen" in caplog.text


def test_blob_only_and_empty_windows_are_dropped() -> None:
    blob = win("s", res("window://h/blob", 1.0), [{"uri": "x", "blob": "AAEC"}])
    empty = win("s", res("window://h/empty", 1.0), [])
    missing = win("s", res("window://h/missing", 1.0), None)
    keep = win("s", res("window://h/keep"))
    assert heads(organize([blob, empty, missing, keep], None, [])) == ["window://h/keep"]


def test_a_window_with_blobs_is_warned_about_once_per_organize(
    caplog: pytest.LogCaptureFixture,
) -> None:
    mixed = win("s", res("window://h/mixed", 1.0), [{"text": "t"}, {"uri": "x", "blob": "AA"}])
    blob = win("s", res("window://h/blob", 1.0), [{"uri": "x", "blob": "AAEC"}])
    with caplog.at_level(logging.WARNING, logger="a2c_computer"):
        assert heads(organize([mixed, blob], None, [])) == ["window://h/mixed"]
    warnings = [r.getMessage() for r in caplog.records if "not rendered" in r.getMessage()]
    assert warnings == [
        "window window://h/mixed: 1 blob content(s) are not rendered",
        "window window://h/blob: 1 blob content(s) are not rendered",
    ]


def test_window_filter_is_an_exact_match_on_the_raw_uri() -> None:
    # 0.2.3 (spec delta §8, A14): character-for-character Resource.uri, no normalization.
    windows = [win("s", res("window://h/a")), win("s", res("window://h/b?x=1"))]
    assert heads(organize(windows, None, [], "window://h/b?x=1")) == ["window://h/b"]
    assert organize(windows, None, [], "window://h/b") == []
    assert organize(windows, None, [], "window://H/a") == []
    assert organize(windows, None, [], "window://h/a/") == []
    assert organize(windows, None, [], "window://h/nope") == []
    assert organize(windows, 0, [], "window://h/b?x=1") == []


def test_window_filter_runs_before_organizing() -> None:
    # A fullscreen sibling would hide the window in the aggregate view; filtered first, the
    # requested window is all that is organized, so it comes back.
    side = win("s", res("window://h/side", 0.1))
    full = win("s", res("window://h/full", 0.9, fullscreen=True))
    assert heads(organize([side, full], None, [])) == ["window://h/full"]
    assert heads(organize([side, full], None, [], "window://h/side")) == ["window://h/side"]


def test_window_filter_keeps_every_duplicate_and_drops_unrenderable_matches() -> None:
    one = win("a", res("window://h/same", 0.2))
    two = win("b", res("window://h/same", 0.8))
    other = win("b", res("window://h/other", 1.0))
    both = organize([one, two, other], None, [rec("b", 1.0)], "window://h/same")
    assert heads(both) == ["window://h/same", "window://h/same"]
    assert organize([one, two], 1, [], "window://h/same") == [both[0]]
    blob_only = win("a", res("window://h/blob"), [{"uri": "x", "blob": "AAEC"}])
    assert organize([blob_only], None, [], "window://h/blob") == []


def test_select_window_filters_infos_before_any_read() -> None:
    infos = [win("s", res(uri))[0] for uri in ("window://h/a", "window://h/b", "window://h/a")]
    assert select_window(infos, None) == infos
    assert select_window(infos, "window://h/a") == [infos[0], infos[2]]
    assert select_window(infos, "window://h/a?") == []


def test_render_joins_text_blocks_and_skips_blobs_and_empty_text() -> None:
    uri = WindowURI.build("h", "docs/spec", "read me")
    contents = [{"text": "one"}, {"blob": "AA"}, {"text": ""}, {"text": "two"}]
    assert render_window(uri, contents) == "window://h/docs%2Fspec/read%20me\n\none\n\ntwo"
    assert render_window(uri, [{"text": ""}]) == "window://h/docs%2Fspec/read%20me"
