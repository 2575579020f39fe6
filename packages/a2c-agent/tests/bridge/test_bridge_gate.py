"""Who may use the bridge over HTTP: the pure rules of ``_gate`` (Host, Origin, bearer)."""

from __future__ import annotations

import pytest

from a2c_agent._bridge._args import usage_problem
from a2c_agent._bridge._gate import check_request, normal_origin
from a2c_agent._cli._args import parse_args

BASE = ["--server", "http://127.0.0.1:9", "--office", "o1", "mcp"]


def headers(**values: str) -> dict[bytes, bytes]:
    return {k.replace("_", "-").encode(): v.encode() for k, v in values.items()}


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:8765", "localhost:8765", "localhost", "[::1]:80", "127.0.0.2", "LOCALHOST:1"],
)
def test_loopback_hosts_pass_on_loopback(host: str) -> None:
    assert check_request(headers(host=host), loopback=True, token=None) is None


@pytest.mark.parametrize(
    "host", ["localhost:evil", "localhost.evil.com:80", "evil.com", "127.0.0.1:80:1", "[::1]x", ""]
)
def test_other_hosts_are_refused_on_loopback(host: str) -> None:
    # mcp's check matched "localhost:*" as a prefix.
    refusal = check_request(headers(host=host), loopback=True, token=None)
    assert refusal is not None and refusal.status == 421


def test_off_loopback_any_host_passes() -> None:
    assert check_request(headers(host="mcp.example.com"), loopback=False, token=None) is None


@pytest.mark.parametrize(
    ("origin", "loopback", "allowed", "ok"),
    [
        ("http://localhost:6274", True, (), True),
        ("http://127.0.0.1:3000", True, (), True),
        ("https://evil.example", True, (), False),
        ("null", True, (), False),
        # Off loopback an Origin was never looked at.
        ("https://evil.example", False, (), False),
        ("http://localhost:6274", False, (), False),
        ("https://app.example.com", False, ("https://app.example.com",), True),
        ("HTTPS://App.Example.com:443", False, ("https://app.example.com:443",), True),
        ("https://app.example.com:8443", False, ("https://app.example.com",), False),
    ],
)
def test_origins(origin: str, loopback: bool, allowed: tuple[str, ...], ok: bool) -> None:
    host = "127.0.0.1:8765" if loopback else "mcp.example.com"
    refusal = check_request(
        headers(host=host, origin=origin), loopback=loopback, token=None, origins=allowed
    )
    assert (refusal is None) is ok
    if not ok:
        assert refusal is not None and refusal.status == 403 and "--http-origin" in refusal.message


def test_no_origin_header_is_a_non_browser_client() -> None:
    assert check_request(headers(host="x.example"), loopback=False, token=None) is None


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("Bearer tok", True),
        ("bearer tok", True),  # the scheme is case-insensitive
        ("BEARER  tok ", True),
        ("Bearer tok2", False),
        ("Basic tok", False),
        ("tok", False),
        ("", False),
    ],
)
def test_the_bearer_token(value: str, ok: bool) -> None:
    given = headers(host="127.0.0.1:1", authorization=value) if value else headers(host="::1")
    refusal = check_request(given, loopback=False, token="tok")
    assert (refusal is None) is ok
    if not ok:
        assert refusal is not None and refusal.status == 401


def test_origin_flags_are_normalised_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    _, args = parse_args([*BASE, "--http-origin", "HTTPS://App.Example.com/"], {})
    assert args.http_origins == ["https://app.example.com"]
    with pytest.raises(SystemExit):
        parse_args([*BASE, "--http-origin", "app.example.com"], {})
    assert "expected an origin" in capsys.readouterr().err
    assert normal_origin("http://[::1]:8080") == "http://[::1]:8080"
    assert normal_origin("http://h/path") is None


def test_the_http_token_comes_from_the_environment() -> None:
    # A flag is visible in the process list; the variable is not.
    _, args = parse_args([*BASE, "--http", "0.0.0.0:8080"], {"A2C_MCP_HTTP_TOKEN": "t0k"})
    assert args.http_token == "t0k"
    assert usage_problem(args) is None
