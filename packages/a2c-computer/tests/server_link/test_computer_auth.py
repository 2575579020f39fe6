"""4006/4007/4003 decision table and the auth_hint sanitizer."""

from __future__ import annotations

import pytest

from a2c_computer import classify_upstream_failure, sanitize_auth_hint


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"http_status": 401}, 4006),
        ({"http_status": None, "credentials_configured": False}, 4006),
        ({"http_status": 403}, 4007),
        ({"http_status": None, "refresh_failed": True}, 4007),
        ({"http_status": None, "revoked": True}, 4007),
        ({"http_status": 500}, 4003),
        ({"http_status": 502}, 4003),
        ({"http_status": None}, 4003),
    ],
)
def test_decision_table(kwargs: dict[str, object], code: int) -> None:
    assert classify_upstream_failure(**kwargs) == code  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "secret",
    [
        "https://id.example.org/authorize?client_id=abc&state=xyz&code_challenge=QQQ",
        "state=s3cr3tstate",
        "code_verifier=verif13r",
        "access_token: abcdef123",
        "refresh_token=rt-998877",
        "client_secret=shh",
        "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
        "password=hunter2",
        "sk_live_0123456789abcdefghijklmnopqrstuv",
    ],
)
def test_sanitizer_removes_secrets(secret: str) -> None:
    hint = sanitize_auth_hint(
        {"action": "user_authorization_required", "message": f"Sign in: {secret} then retry"}
    )
    message = hint["message"]
    for fragment in (
        "xyz",
        "QQQ",
        "s3cr3tstate",
        "verif13r",
        "abcdef123",
        "rt-998877",
        "shh",
        "eyJ",
        "hunter2",
        "sk_live_0123456789",
    ):
        assert fragment not in message
    assert "?" not in message


def test_sanitizer_keeps_plain_text_and_landing_urls() -> None:
    hint = sanitize_auth_hint(
        {
            "action": "user_authorization_required",
            "message": "Complete the sign-in at https://id.example.org/signin on the Computer.",
        }
    )
    assert hint == {
        "action": "user_authorization_required",
        "message": "Complete the sign-in at https://id.example.org/signin on the Computer.",
    }


def test_sanitizer_drops_unknown_keys_and_bad_actions() -> None:
    hint = sanitize_auth_hint(
        {"action": "go to https://x?code=1", "message": "ok", "token": "abc", "url": "u"}
    )
    assert hint == {"message": "ok"}
    assert sanitize_auth_hint(None) == {}


def test_server_error_descriptions_are_redacted() -> None:
    from a2c_computer._mcp import describe_error

    error = ExceptionGroup(
        "transport", [OSError("cannot reach http://h:1/mcp?api_key=s3cr3t (Bearer abc.def.ghi)")]
    )
    text = describe_error(error)
    assert "s3cr3t" not in text and "abc.def.ghi" not in text
    assert "http://h:1/mcp" in text
