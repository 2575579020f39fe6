"""JWT / OIDC bearer tokens: verify ``auth.token`` and read its grant.

Needs the ``a2c-server[jwt]`` extra (PyJWT with its crypto backend, and httpx for JWKS).
Asymmetric algorithms only unless an HS256 secret is configured explicitly; ``none`` is
never accepted. ``iss``, ``aud``, ``exp`` and ``sub`` are required, ``nbf`` is honoured,
all with a small leeway for clock skew. The grant is the ``a2c`` claim (see
:mod:`._grants`); a token without it is refused, since it grants no office.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

from a2c_server._exceptions import AuthenticationError, SettingsError

from ._algorithms import algorithms_for_key
from ._base import AuthRequest, Identity
from ._grants import GRANT_CLAIM, Grant, GrantError

__all__ = ["ASYMMETRIC_ALGORITHMS", "JwksKeys", "JwtAuth", "require_jwt_support"]

_log = logging.getLogger("a2c_server.auth")

ASYMMETRIC_ALGORITHMS: Final = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
)  # fmt: skip
_MAX_TOKEN: Final = 16_384
_MAX_JWKS_BYTES: Final = 1_000_000
_INVALID: Final = "Authentication failed: invalid token"


def require_jwt_support() -> None:
    """Raise :class:`SettingsError` naming the extra unless PyJWT and httpx import."""
    try:
        import httpx  # noqa: F401
        import jwt  # noqa: F401
        from jwt.algorithms import has_crypto
    except ImportError as exc:
        raise SettingsError(
            f"JWT authentication needs the jwt extra: install a2c-server[jwt] ({exc})"
        ) from exc
    if not has_crypto:
        raise SettingsError("JWT authentication needs PyJWT's crypto backend: a2c-server[jwt]")


class _Key(NamedTuple):
    key: Any
    alg: str | None


class JwksKeys:
    """The signing keys published at a JWKS URL, cached.

    Refreshed when a token names an unknown ``kid`` or the cache is older than
    ``max_age``, but at most once per ``min_refresh`` seconds whatever tokens say, so a
    stream of made-up ``kid`` values cannot make the Server hammer the issuer. A failed
    refresh keeps the keys already known.
    """

    def __init__(
        self,
        url: str,
        *,
        min_refresh: float = 30.0,
        max_age: float = 3600.0,
        timeout: float = 5.0,
    ) -> None:
        require_jwt_support()
        self.url = url
        self._min_refresh = min_refresh
        self._max_age = max_age
        self._timeout = timeout
        self._keys: dict[str, _Key] = {}
        self._fetched_at: float | None = None
        self._tried_at: float | None = None
        self._lock = asyncio.Lock()
        #: How many times the URL was fetched (observability and tests).
        self.fetches = 0

    async def key(self, kid: str | None) -> _Key | None:
        """The key for ``kid`` and the algorithm the issuer bound it to, if any.

        A token without ``kid`` works while the set holds exactly one key.
        """
        found = self._lookup(kid)
        if found is not None and not self._stale():
            return found
        async with self._lock:
            found = self._lookup(kid)
            if found is not None and not self._stale():
                return found
            if self._may_refresh():
                await self._refresh()
                found = self._lookup(kid)
        return found

    def _lookup(self, kid: str | None) -> _Key | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    def _stale(self) -> bool:
        return self._fetched_at is None or time.monotonic() - self._fetched_at > self._max_age

    def _may_refresh(self) -> bool:
        return self._tried_at is None or time.monotonic() - self._tried_at >= self._min_refresh

    async def _refresh(self) -> None:
        import httpx

        self._tried_at = time.monotonic()
        self.fetches += 1
        try:
            # One deadline for the whole fetch: httpx's timeout is per read, so an issuer
            # (or whoever answers at its address) trickling bytes would hold it for ever.
            async with asyncio.timeout(self._timeout):
                body = await self._download(httpx)
            document = json.loads(body)
            entries = document.get("keys") if isinstance(document, dict) else None
            if not isinstance(entries, list):
                raise ValueError("JWKS has no 'keys' list")
        except (httpx.HTTPError, ValueError, TimeoutError) as exc:
            reason = f"no answer within {self._timeout}s" if isinstance(exc, TimeoutError) else exc
            _log.warning("JWKS refresh failed url=%s reason=%s", self.url, reason)
            return
        self._keys = _parse_keys(entries)
        self._fetched_at = time.monotonic()
        _log.info("JWKS loaded url=%s keys=%d", self.url, len(self._keys))

    async def _download(self, httpx: Any) -> bytes:
        """The JWKS body, read no further than the size cap (a huge body is never held)."""
        async with (
            httpx.AsyncClient(timeout=self._timeout, follow_redirects=False) as http,
            http.stream("GET", self.url, headers={"accept": "application/json"}) as response,
        ):
            response.raise_for_status()
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > _MAX_JWKS_BYTES:
                    raise ValueError(f"JWKS larger than {_MAX_JWKS_BYTES} bytes")
            return bytes(body)


def _parse_keys(entries: list[Any]) -> dict[str, _Key]:
    import jwt

    keys: dict[str, _Key] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK(entry)
        except jwt.PyJWKError as exc:
            _log.warning("JWKS key skipped index=%d reason=%s", index, exc)
            continue
        kid = entry.get("kid")
        bound = entry.get("alg")
        keys[kid if isinstance(kid, str) else f"#{index}"] = _Key(
            key.key, bound if isinstance(bound, str) else None
        )
    return keys


class JwtAuth:
    """Accepts clients whose ``auth["token"]`` is a valid JWT carrying an ``a2c`` grant.

    Give exactly one key source: ``jwks_url`` (an OIDC issuer's ``jwks_uri``),
    ``public_key_pem`` (the issuer's public key) or ``secret`` (HS256, for setups that
    share a secret with the token minter). ``issuer`` and ``audience`` are required: a
    token minted for another service of the same issuer is refused.
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        jwks_url: str | None = None,
        public_key_pem: str | None = None,
        secret: str | None = None,
        leeway: float = 30.0,
        jwks: JwksKeys | None = None,
    ) -> None:
        require_jwt_support()
        if sum(x is not None for x in (jwks_url or jwks, public_key_pem, secret)) != 1:
            raise SettingsError("JWT: give exactly one of a JWKS URL, a public key or a secret")
        if not issuer or not audience:
            raise SettingsError("JWT: the issuer and the audience are required")
        self._issuer = issuer
        self._audience = audience
        self._leeway = leeway
        self._jwks = jwks or (JwksKeys(jwks_url) if jwks_url else None)
        self._static: Any = None
        if secret is not None:
            if len(secret.encode()) < 32:
                raise SettingsError("JWT: an HS256 secret must be at least 32 bytes")
            self._static = secret
            self._algorithms: tuple[str, ...] = ("HS256",)
        else:
            self._algorithms = ASYMMETRIC_ALGORITHMS
            if public_key_pem is not None:
                self._static = _load_public_key(public_key_pem)

    @classmethod
    def from_files(
        cls, *, issuer: str, audience: str, public_key_file: str, leeway: float = 30.0
    ) -> JwtAuth:
        """A provider verifying with the PEM public key in ``public_key_file``."""
        try:
            pem = Path(public_key_file).read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"JWT public key {public_key_file!r}: {exc}") from exc
        return cls(issuer=issuer, audience=audience, public_key_pem=pem, leeway=leeway)

    def refusal_at_once(self, auth: Mapping[str, Any]) -> AuthenticationError | None:
        """The refusal of ``auth`` that needs no decoding (no token, an oversized one), or None.

        The Server refuses such a connect before it builds a Socket.IO session for it.
        """
        token = auth.get("token")
        if not isinstance(token, str) or not token:
            return AuthenticationError("Authentication failed: auth.token is required")
        if len(token) > _MAX_TOKEN:
            return AuthenticationError(_INVALID)
        return None

    async def authenticate(self, request: AuthRequest) -> Identity:
        import jwt

        refusal = self.refusal_at_once(request.auth)
        if refusal is not None:
            raise refusal
        token = request.auth["token"]
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise AuthenticationError(_INVALID) from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self._algorithms:
            raise AuthenticationError("Authentication failed: token algorithm not accepted")
        key = await self._key(header.get("kid"), alg)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[alg],
                issuer=self._issuer,
                audience=self._audience,
                leeway=self._leeway,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise AuthenticationError("Authentication failed: token expired") from None
        except (jwt.PyJWTError, TypeError, ValueError) as exc:
            # Not only InvalidTokenError: a key PyJWT cannot use with the token's algorithm
            # raises InvalidKeyError or TypeError, and that is the token's fault too.
            _log.info("JWT refused reason=%s", exc)
            raise AuthenticationError(_INVALID) from None
        return _identity(claims, self._leeway)

    async def _key(self, kid: Any, alg: str) -> Any:
        if self._jwks is None:
            found = _Key(self._static, None)
        else:
            if kid is not None and not isinstance(kid, str):
                raise AuthenticationError(_INVALID)
            jwk = await self._jwks.key(kid)
            if jwk is None:
                raise AuthenticationError("Authentication failed: unknown signing key")
            found = jwk
        # A key the issuer bound to one algorithm is not used with another; an unbound
        # asymmetric key only with the algorithms of its own family.
        if found.alg is not None:
            accepted: tuple[str, ...] = (found.alg,)
        elif self._algorithms == ("HS256",):
            accepted = self._algorithms
        else:
            accepted = algorithms_for_key(found.key)
        if alg not in accepted:
            raise AuthenticationError("Authentication failed: token algorithm not accepted")
        return found.key

    def __repr__(self) -> str:
        source = f"jwks={self._jwks.url!r}" if self._jwks else "static key"
        return f"JwtAuth(issuer={self._issuer!r}, audience={self._audience!r}, {source})"


def _identity(claims: Mapping[str, Any], leeway: float) -> Identity:
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject or len(subject) > 256:
        raise AuthenticationError(_INVALID)
    if GRANT_CLAIM not in claims:
        raise AuthenticationError(
            f"Authentication failed: the token has no {GRANT_CLAIM!r} claim granting offices"
        )
    try:
        grant = Grant.from_claim(claims[GRANT_CLAIM])
    except GrantError as exc:
        raise AuthenticationError(f"Authentication failed: {exc}") from None
    exp = claims["exp"]
    return Identity(
        subject=subject,
        attributes={"issuer": claims.get("iss")},
        grant=grant,
        expires_at=float(exp) + leeway if isinstance(exp, int | float) else None,
    )


def _load_public_key(pem: str) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        return load_pem_public_key(pem.encode("ascii"))
    except (ValueError, UnicodeEncodeError) as exc:
        raise SettingsError(f"JWT public key: not a PEM public key ({exc})") from exc
