"""Upstream authorization outcomes (errors.md §4) and the ``auth_hint`` sanitizer.

Rules:

* decision table: no credential configured / HTTP 401 → 4006; HTTP 403, failed refresh,
  revoked grant, insufficient scope → 4007; provider 5xx / network errors → 4003; when
  undecidable, 4006;
* ``auth_hint`` has only ``action`` (a ``snake_case`` word) and ``message`` (one plain
  sentence); the sanitizer removes tokens, OAuth flow parameters, client credentials,
  passwords/OTPs and the query string of every URL, whatever the message says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from a2c_protocol import ErrorCode

__all__ = [
    "SENSITIVE_KEYS",
    "classify_upstream_failure",
    "default_auth_hint",
    "redact_text",
    "sanitize_auth_hint",
]

SENSITIVE_KEYS: Final = (
    "access_token",
    "refresh_token",
    "id_token",
    "bearer_token",
    "token",
    "code_verifier",
    "code_challenge",
    "code",
    "state",
    "nonce",
    "client_id",
    "client_secret",
    "client_assertion",
    "assertion",
    "password",
    "passwd",
    "otp",
    "totp",
    "api_key",
    "apikey",
)
# api_key and api-key alike: command-line flags spell the keys with hyphens.
_KEYS_RE: Final = "|".join(
    re.escape(k).replace("_", "[-_]") for k in sorted(SENSITIVE_KEYS, key=len, reverse=True)
)
_URL_QUERY: Final = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s?#]*)[?#][^\s]*")
_PAIR: Final = re.compile(rf"(?i)\b({_KEYS_RE})\b(\s*[=:]\s*|%3D)[^\s&;,]*")
_BEARER: Final = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")
_JWT: Final = re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?")
_LONG_SECRET: Final = re.compile(
    r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}\b"
)
_ACTION: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")


def classify_upstream_failure(
    *,
    http_status: int | None,
    credentials_configured: bool = True,
    refresh_failed: bool = False,
    revoked: bool = False,
) -> int:
    """The tool error code for an upstream failure (decision table of errors.md §4.1)."""
    if refresh_failed or revoked:
        return ErrorCode.TOOL_AUTHORIZATION_FAILED
    if http_status == 401:
        return ErrorCode.TOOL_AUTHORIZATION_REQUIRED
    if http_status == 403:
        return ErrorCode.TOOL_AUTHORIZATION_FAILED
    if http_status is not None and (http_status >= 500 or http_status < 400):
        return ErrorCode.TOOL_EXECUTION_FAILED
    if http_status is None and not credentials_configured:
        return ErrorCode.TOOL_AUTHORIZATION_REQUIRED
    if http_status is None:
        return ErrorCode.TOOL_EXECUTION_FAILED
    return ErrorCode.TOOL_AUTHORIZATION_REQUIRED


def redact_text(text: str) -> str:
    """``text`` without URL queries, credential pairs, bearer tokens or long secrets."""
    return _clean_text(text)


def _clean_text(text: str) -> str:
    text = _URL_QUERY.sub(r"\1", text)
    text = _PAIR.sub(lambda m: f"{m.group(1)}=[redacted]", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} [redacted]", text)
    text = _JWT.sub("[redacted]", text)
    text = _LONG_SECRET.sub("[redacted]", text)
    return text.strip()


def sanitize_auth_hint(hint: Mapping[str, Any] | None) -> dict[str, str]:
    """A copy of ``hint`` safe to send to an Agent (unknown keys dropped)."""
    out: dict[str, str] = {}
    if not hint:
        return out
    action = hint.get("action")
    if isinstance(action, str) and _ACTION.fullmatch(action):
        out["action"] = action
    message = hint.get("message")
    if isinstance(message, str):
        cleaned = _clean_text(message)
        if cleaned:
            out["message"] = cleaned[:500]
    return out


def default_auth_hint(code: int, server: str) -> dict[str, str]:
    """The hint the Computer sends for 4006 / 4007."""
    if code == ErrorCode.TOOL_AUTHORIZATION_FAILED:
        return {
            "action": "token_refresh_required",
            "message": f"The authorization for MCP server {server} is no longer sufficient; "
            "check its permissions or sign in again on the Computer's host, then retry.",
        }
    return {
        "action": "user_authorization_required",
        "message": f"MCP server {server} needs authorization; complete the sign-in on the "
        "Computer's host, then retry.",
    }
