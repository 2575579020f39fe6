"""What an input request may carry, whoever relays it: pure rules. No I/O.

A Computer in an office may be hostile (a compromised machine, a non-project Computer, an MCP
server misbehaving behind an honest one), so every role applies the same three bounds before
a request reaches a handler, a terminal or an MCP host:

- **Requests per round.** One input-required answer carries at most
  ``DEFAULT_MAX_REQUESTS_PER_ROUND`` requests (a setting on the Agent and on the Computer).
  A larger round is refused whole: answering part of it would still cost a handler call per
  request the Agent never agreed to.
- **Requests per call.** All rounds of one tool call together carry at most
  ``DEFAULT_MAX_REQUESTS_PER_CALL`` requests.
- **URL mode carries web links only.** ``https:`` anywhere, ``http:`` only to a loopback host
  (a sign-in page served on the user's own machine). ``javascript:``, ``file:``, ``data:``
  and every other scheme are refused with a message that names the scheme.

Each rule answers ``None`` when the input passes and otherwise the sentence to put in the
refusal and the log line.
"""

from __future__ import annotations

import ipaddress
from typing import Final
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_MAX_REQUESTS_PER_CALL",
    "DEFAULT_MAX_REQUESTS_PER_ROUND",
    "call_refusal",
    "round_refusal",
    "url_refusal",
]

DEFAULT_MAX_REQUESTS_PER_ROUND: Final = 16
DEFAULT_MAX_REQUESTS_PER_CALL: Final = 64

_LOOPBACK_NAMES: Final = frozenset({"localhost", "localhost."})


def round_refusal(count: int, cap: int = DEFAULT_MAX_REQUESTS_PER_ROUND) -> str | None:
    """Refuse a round of ``count`` requests over ``cap``; name both numbers."""
    if count <= cap:
        return None
    return (
        f"one round carries {count} input requests; at most {cap} are taken per round "
        "(max_input_requests_per_round)"
    )


def call_refusal(total: int, cap: int = DEFAULT_MAX_REQUESTS_PER_CALL) -> str | None:
    """Refuse a call whose rounds have carried ``total`` requests in all, over ``cap``."""
    if total <= cap:
        return None
    return (
        f"this tool call has asked {total} input requests in all; at most {cap} are taken "
        "per call (max_input_requests_per_call)"
    )


def _loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_refusal(url: object) -> str | None:
    """Refuse a URL-mode link that is not ``https:`` (or ``http:`` to loopback)."""
    if not isinstance(url, str) or not url:
        return "a URL-mode request carries no URL"
    # A control character or blank can hide the real target from the person who reads it.
    if any(ch.isspace() or ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in url):
        return "the URL contains blanks or control characters; only web links are shown"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return "the URL cannot be parsed; only web links are shown"
    scheme = parts.scheme.lower()
    if scheme == "https" and host:
        return None
    if scheme == "http" and host and _loopback(host):
        return None
    if scheme == "http":
        return (
            "URL scheme 'http:' is taken only for a loopback host (localhost, 127.0.0.0/8, "
            "[::1]); use https:"
        )
    if scheme == "https":
        return "the https: URL names no host"
    shown = f"'{scheme}:'" if scheme else "no scheme"
    return f"URL scheme {shown} is refused; only https: (and http: to loopback) links are shown"
