"""The bounds every role puts on input requests (requests per round and call, URL schemes)."""

from __future__ import annotations

import pytest

from a2c_protocol._input import (
    DEFAULT_MAX_REQUESTS_PER_CALL,
    DEFAULT_MAX_REQUESTS_PER_ROUND,
    call_refusal,
    round_refusal,
    url_refusal,
)


def test_round_cap_default_and_message() -> None:
    assert DEFAULT_MAX_REQUESTS_PER_ROUND == 16
    assert round_refusal(16) is None
    assert round_refusal(1, cap=1) is None
    message = round_refusal(17)
    assert message is not None and "17" in message and "16" in message
    assert round_refusal(3, cap=2) is not None


def test_call_cap_default_and_message() -> None:
    assert DEFAULT_MAX_REQUESTS_PER_CALL == 64
    assert call_refusal(64) is None
    message = call_refusal(65)
    assert message is not None and "65" in message and "64" in message


@pytest.mark.parametrize(
    "url",
    [
        "https://example.org/sign-in?x=1",
        "HTTPS://Example.org/",
        "http://localhost:8080/cb",
        "http://127.0.0.1/",
        "http://127.9.9.9:1/",
        "http://[::1]:3000/x",
    ],
)
def test_web_links_pass(url: str) -> None:
    assert url_refusal(url) is None


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("javascript:alert(1)", "'javascript:'"),
        ("JavaScript:alert(1)", "'javascript:'"),
        ("file:///etc/passwd", "'file:'"),
        ("data:text/html,<b>x</b>", "'data:'"),
        ("vbscript:x", "'vbscript:'"),
        ("//example.org/x", "no scheme"),
        ("http://example.org/", "'http:'"),
        ("http://10.0.0.1/", "'http:'"),
        ("https:///nohost", "no host"),
        ("https://example.org/\x1b]0;pwned\x07", "control"),
        ("https://exa mple.org/", "blanks"),
        ("", "no URL"),
        (None, "no URL"),
        ("https://[::1/", "cannot be parsed"),
    ],
)
def test_other_links_are_refused_by_name(url: object, named: str) -> None:
    message = url_refusal(url)
    assert message is not None and named in message
