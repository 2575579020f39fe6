"""A token issuer stand-in: keys made here, a JWKS served over HTTP on loopback.

Plays the OIDC issuer of a JWT deployment in tests: :meth:`Issuer.token` signs tokens
with the current key, :meth:`Issuer.rotate` publishes a new key under a new ``kid`` (the
old one stays published unless ``drop_old``), and :attr:`Issuer.jwks_requests` counts how
often the Server fetched the set. Needs PyJWT with crypto (the ``a2c-server[jwt]`` extra).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey

__all__ = ["Issuer", "running_issuer"]

ISSUER = "https://issuer.test/realms/a2c"
AUDIENCE = "a2c-server"


class Issuer:
    """Signing keys and the JWKS document that publishes their public halves."""

    def __init__(self, *, algorithm: str = "RS256") -> None:
        self.issuer = ISSUER
        self.audience = AUDIENCE
        self.algorithm = algorithm
        self.url = ""
        self.jwks_requests = 0
        self._lock = threading.Lock()
        self._keys: dict[str, PrivateKey] = {}
        self._generation = 0
        self.kid = ""
        self.rotate()

    def _new_key(self) -> PrivateKey:
        if self.algorithm.startswith("ES"):
            return ec.generate_private_key(ec.SECP256R1())
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def rotate(self, *, drop_old: bool = False) -> str:
        """Sign with a fresh key under a new ``kid`` from now on; return the ``kid``."""
        with self._lock:
            self._generation += 1
            kid = f"key-{self._generation}"
            if drop_old:
                self._keys.clear()
            self._keys[kid] = self._new_key()
            self.kid = kid
        return kid

    def jwks(self) -> dict[str, Any]:
        with self._lock:
            keys = []
            for kid, key in self._keys.items():
                jwk = json.loads(
                    jwt.algorithms.get_default_algorithms()[self.algorithm].to_jwk(key.public_key())
                )
                keys.append({**jwk, "kid": kid, "use": "sig", "alg": self.algorithm})
        return {"keys": keys}

    def private_key(self, kid: str | None = None) -> PrivateKey:
        return self._keys[kid or self.kid]

    def token(
        self,
        subject: str,
        grant: Mapping[str, Any] | None,
        *,
        lifetime: float = 600,
        kid: str | None = None,
        key: Any = None,
        algorithm: str | None = None,
        **claims: Any,
    ) -> str:
        """A signed token for ``subject`` with ``grant`` as its ``a2c`` claim.

        ``claims`` override or add claims (``aud``, ``iss``, ``exp``, ``nbf``…; a None value
        removes the claim); ``key``/``algorithm`` sign with something else (forgeries).
        """
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.issuer, "aud": self.audience, "sub": subject,
            "iat": now, "exp": now + int(lifetime),
        }  # fmt: skip
        if grant is not None:
            body["a2c"] = dict(grant)
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        kid = kid or self.kid
        return jwt.encode(
            body,
            key if key is not None else self.private_key(kid),
            algorithm=algorithm or self.algorithm,
            headers={"kid": kid},
        )


@contextlib.contextmanager
def running_issuer(*, algorithm: str = "RS256") -> Iterator[Issuer]:
    """An :class:`Issuer` whose JWKS is served at ``issuer.url`` until the block exits."""
    issuer = Issuer(algorithm=algorithm)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with issuer._lock:
                issuer.jwks_requests += 1
            body = json.dumps(issuer.jwks()).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, name="jwks", daemon=True)
    thread.start()
    issuer.url = f"http://127.0.0.1:{httpd.server_address[1]}/jwks.json"
    try:
        yield issuer
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)
