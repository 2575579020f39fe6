"""Client handshake helpers: the version query, refusal diagnosis, backoff."""

import json
import random

import pytest

from a2c_protocol import (
    PROTOCOL_VERSION,
    WS_CLOSE_VERSION_REJECTED,
    BadRequestError,
    ProtocolVersionError,
    error_from_handshake_response,
    reconnect_delays,
    version_rejected_by_close,
    with_version_query,
)

BODY_4008 = {"code": 4008, "message": "Protocol version mismatch", "server_version": "0.2.0",
             "client_version": "0.3.0", "min_supported": "0.2.0", "max_supported": "0.2.999"}  # fmt: skip


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000?a2c_version=0.2.3"),
        ("https://hub.example.org/smcp/", "https://hub.example.org/smcp/?a2c_version=0.2.3"),
        ("http://h/x?tenant=7", "http://h/x?tenant=7&a2c_version=0.2.3"),
    ],
)
def test_version_is_appended(url: str, expected: str) -> None:
    assert with_version_query(url) == expected
    assert PROTOCOL_VERSION in with_version_query(url)


def test_application_cannot_pass_the_version_by_hand() -> None:
    with pytest.raises(ValueError, match="do not put a2c_version"):
        with_version_query("http://h/?a2c_version=0.1.0")
    with pytest.raises(ValueError, match="http"):
        with_version_query("ftp://h/")


def test_4008_body_is_authoritative() -> None:
    error = error_from_handshake_response(
        400, {"X-A2C-Error-Code": "4008"}, json.dumps(BODY_4008).encode()
    )
    assert isinstance(error, ProtocolVersionError)
    assert error.server_version == "0.2.0" and error.client_version == "0.3.0"
    assert error.to_payload().max_supported == "0.2.999"


def test_header_is_the_fallback_when_the_body_is_unreadable() -> None:
    error = error_from_handshake_response(400, {"x-a2c-error-code": "4008"}, b"<html>")
    assert isinstance(error, ProtocolVersionError) and error.code == 4008


def test_missing_version_body_is_a_400() -> None:
    body = b'{"code": 400, "message": "Missing a2c_version query parameter"}'
    error = error_from_handshake_response(400, {}, body)
    assert isinstance(error, BadRequestError)
    assert error.message == "Missing a2c_version query parameter"


def test_success_is_not_an_error() -> None:
    assert error_from_handshake_response(200, {}, b"0{}") is None


def test_close_4900_error() -> None:
    error = version_rejected_by_close()
    assert error.code == WS_CLOSE_VERSION_REJECTED
    assert error.client_version == PROTOCOL_VERSION and error.server_version == ""
    assert "polling" in str(error)


def test_backoff_grows_to_a_cap_with_bounded_jitter() -> None:
    delays = reconnect_delays(initial=1.0, maximum=8.0, jitter=0.25, rng=random.Random(7))
    values = [next(delays) for _ in range(8)]
    nominal = [1, 2, 4, 8, 8, 8, 8, 8]
    for value, base in zip(values, nominal, strict=True):
        assert base * 0.75 <= value <= base * 1.25
