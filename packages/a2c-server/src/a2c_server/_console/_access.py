"""Who may open the console: the admin token, exchanged once for an HttpOnly cookie.

The browser sends the token once, in the login form's POST (never in a URL, where access
logs, proxies and the browser's history would keep it); the Server answers with a cookie
holding an HMAC of the token, never the token itself, so no page, script or address ever
carries it. Scripts may send ``Authorization: Bearer <token>`` instead. Without an admin
token the console is only served on a loopback host (checked by the settings) and is open.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from typing import Final

__all__ = ["COOKIE", "Access"]

COOKIE: Final = "a2c_console"
_CONTEXT: Final = b"a2c-server console session v1"


class Access:
    def __init__(self, admin_token: str | None) -> None:
        self._token = admin_token.encode() if admin_token else None
        self._cookie = (
            hmac.new(self._token, _CONTEXT, hashlib.sha256).hexdigest() if self._token else None
        )

    @property
    def open(self) -> bool:
        """No token configured (loopback only): everyone who reaches the port may look."""
        return self._token is None

    def token_ok(self, candidate: str | None) -> bool:
        if self._token is None:
            return True
        return candidate is not None and hmac.compare_digest(candidate.encode(), self._token)

    def cookie_value(self) -> str:
        return self._cookie or ""

    def allowed(self, headers: Iterable[tuple[bytes, bytes]]) -> bool:
        """Whether the request carries the session cookie or the bearer token."""
        return self.cookie_ok(headers) or self.token_ok(self.bearer(headers))

    def cookie_ok(self, headers: Iterable[tuple[bytes, bytes]]) -> bool:
        """Whether the request carries the session cookie (always true without a token)."""
        if self._cookie is None:
            return True
        for key, value in headers:
            if key.lower() == b"cookie":
                for part in value.decode("latin-1").split(";"):
                    k, _, v = part.strip().partition("=")
                    if k == COOKIE and hmac.compare_digest(v.encode(), self._cookie.encode()):
                        return True
        return False

    @staticmethod
    def bearer(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
        """The credential of an ``Authorization: Bearer`` header, if the request has one."""
        for key, value in headers:
            if key.lower() == b"authorization":
                scheme, _, credential = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer":
                    return credential.strip()
        return None

    def set_cookie(self, secure: bool) -> bytes:
        flags = "; Path=/console; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
        return f"{COOKIE}={self.cookie_value()}{flags}".encode()

    @staticmethod
    def clear_cookie() -> bytes:
        return f"{COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0".encode()
