"""window:// URIs: strict (Agent) and lenient (Computer) behaviour, seed §6.1."""

import logging
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_protocol import InvalidWindowURIError, WindowURI, is_window_uri

hosts = st.text(alphabet=string.ascii_letters + string.digits + ".-", min_size=1, max_size=30)
segments = st.lists(st.text(min_size=1, max_size=12), max_size=5)
tails = st.text(max_size=20)


def test_examples_from_the_digest() -> None:
    assert WindowURI.parse("window://org.example.term/session/3") == WindowURI(
        "org.example.term", ("session", "3")
    )
    assert WindowURI.parse("window://org.example.clock").segments == ()
    fs = WindowURI.parse("window://org.example.fs/docs%2Fspec/read%20me")
    assert fs.segments == ("docs/spec", "read me")
    assert str(WindowURI.build("org.example.fs", "docs/spec", "read me")) == (
        "window://org.example.fs/docs%2Fspec/read%20me"
    )


@given(hosts, segments)
def test_build_str_parse_round_trip(host: str, segs: list[str]) -> None:
    uri = WindowURI.build(host, *segs)
    text = str(uri)
    assert WindowURI.parse(text) == uri
    assert WindowURI.parse(text, lenient=True) == uri
    assert str(WindowURI.parse(text)) == text


@given(hosts, segments, tails, st.sampled_from("?#"))
def test_lenient_parse_drops_query_and_fragment(
    host: str, segs: list[str], tail: str, sep: str
) -> None:
    base = str(WindowURI.build(host, *segs))
    assert WindowURI.parse(base + sep + tail, lenient=True) == WindowURI.parse(base)


@given(hosts, segments, tails, st.sampled_from("?#"))
def test_strict_parse_rejects_any_query_or_fragment(
    host: str, segs: list[str], tail: str, sep: str
) -> None:
    base = str(WindowURI.build(host, *segs))
    with pytest.raises(InvalidWindowURIError, match="pure identifiers"):
        WindowURI.parse(base + sep + tail)


def test_seed_6_1_lenient_parse_warns_and_drops_query(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="a2c_protocol.window"):
        uri = WindowURI.parse("window://host/path?priority=5", lenient=True)
    assert str(uri) == "window://host/path"
    assert any("priority=5" in r.getMessage() for r in caplog.records)
    assert all(r.levelno == logging.WARNING for r in caplog.records)


def test_seed_6_1_strict_construction_with_query_is_a_hard_error() -> None:
    with pytest.raises(InvalidWindowURIError, match="query is not allowed"):
        WindowURI.parse("window://host/path?priority=5")


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("https://host/path", "scheme must be 'window://'"),
        ("window:/host", "scheme must be 'window://'"),
        ("window://", "host must not be empty"),
        ("window:///path", "host must not be empty"),
        ("window://user@host/x", "may not contain"),
        ("window://host:80/x", "may not contain"),
        ("window://host/%ff", "not valid UTF-8"),
    ],
)
def test_invalid_uris_name_the_rule(text: str, rule: str) -> None:
    for lenient in (False, True):
        with pytest.raises(InvalidWindowURIError, match=rule):
            WindowURI.parse(text, lenient=lenient)
    assert not is_window_uri(text) or "%ff" in text


@pytest.mark.parametrize(
    ("host", "segs"), [("", ()), ("bad host", ()), ("h_x", ()), ("h", ("",)), ("h", ("a", ""))]
)
def test_builder_rejects_bad_parts(host: str, segs: tuple[str, ...]) -> None:
    with pytest.raises(InvalidWindowURIError):
        WindowURI.build(host, *segs)


def test_empty_segments_are_kept_by_the_parser() -> None:
    assert WindowURI.parse("window://h//x").segments == ("", "x")
    assert WindowURI.parse("window://h/").segments == ("",)
    assert str(WindowURI.parse("window://h/")) == "window://h/"


def test_is_window_uri() -> None:
    assert is_window_uri("window://org.example.a/x?y=1")
    assert not is_window_uri("file:///tmp/x")
    assert not is_window_uri(None)
