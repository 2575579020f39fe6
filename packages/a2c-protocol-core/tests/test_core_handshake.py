"""Client handshake helpers: the version query, refusal diagnosis, backoff."""

import json
import random

import pytest

from a2c_protocol import (
    PROTOCOL_VERSION,
    RECLAIM_AUTH_KEY,
    REJOIN_BUDGET,
    WS_CLOSE_VERSION_REJECTED,
    BadRequestError,
    ProtocolVersionError,
    error_from_handshake_response,
    join_refusal_may_pass,
    new_reclaim_secret,
    reconnect_delays,
    rejoin_delays,
    version_rejected_by_close,
    with_version_query,
)
from a2c_protocol._rejoin import HeldWait, seat_held_refusal

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


# -- re-joining after a reconnect (a2c_protocol._rejoin) ---------------------


@pytest.mark.parametrize(
    "reason",
    [
        "Name 'box' is already taken in office 'o1'",  # this project's Server
        "Room already has an agent",  # the protocol's seat sentence
        "Internal server error: Name 'box' already registered by sid 'x' in namespace /smcp",
        "Internal server error: Agent already in room",  # the official Server
        "Registry unavailable, try again later",
    ],
)
def test_rejoin_refusal_of_a_held_name_or_seat_may_pass(reason: str) -> None:
    assert join_refusal_may_pass(reason)


@pytest.mark.parametrize(
    "reason",
    [
        None,
        "",
        "office 'o1' is not granted to this identity",
        "Role mismatch: connected as computer, asked to join as agent",
        "name must not be empty",
        "Agent is already in office 'o2'; leave it first",
        "Internal server error: Agent sid already in room",
    ],
)
def test_rejoin_refusal_that_waiting_cannot_change_is_final(reason: str | None) -> None:
    assert not join_refusal_may_pass(reason)


@pytest.mark.parametrize(
    ("reason", "seat"),
    [
        ("Room already has an agent", True),  # the protocol's seat sentence
        ("Internal server error: Agent already in room", True),  # the official Server
        ("Name 'box' is already taken in office 'o1'", False),  # a name, not the seat
        ("Registry unavailable, try again later", False),
        ("Internal server error: Agent sid already in room", False),
        (None, False),
        ("", False),
    ],
)
def test_a_refusal_for_the_agent_seat_is_told_apart(reason: str | None, seat: bool) -> None:
    assert seat_held_refusal(reason) is seat
    if seat:  # a held seat is one of the refusals that may pass
        assert join_refusal_may_pass(reason)


def test_held_wait_keeps_the_start_the_delays_and_the_budget() -> None:
    held = HeldWait(100.0, rng=random.Random(3))
    expected = rejoin_delays(rng=random.Random(3))
    assert [held.next_delay() for _ in range(6)] == [next(expected) for _ in range(6)]
    assert held.since == 100.0
    assert held.waited(103.5) == 3.5
    assert not held.spent(5.0, 105.0)  # exactly the budget: not yet spent
    assert held.spent(5.0, 105.1)
    assert not held.spent(None, 1e9)  # no budget: waits for ever


def test_rejoin_delays_are_0_1_2_4_then_8_with_jitter() -> None:
    delays = rejoin_delays(rng=random.Random(3))
    got = [next(delays) for _ in range(8)]
    assert got[0] == 0.0
    for value, step in zip(got[1:], (1, 2, 4, 8, 8, 8, 8), strict=True):
        assert step * 0.75 <= value <= step * 1.25
    # The budget outlasts the default --node-ttl (6 s) plus a reaper tick many times over.
    assert REJOIN_BUDGET >= 10 * 6.0


def test_reclaim_secret_is_fresh_and_url_safe() -> None:
    first, second = new_reclaim_secret(), new_reclaim_secret()
    assert first != second and len(first) >= 43
    assert all(c.isalnum() or c in "-_" for c in first)
    assert RECLAIM_AUTH_KEY == "a2c_reclaim"
