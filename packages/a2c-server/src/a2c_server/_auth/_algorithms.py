"""Which JWT algorithms a verification key can take, from the key itself.

A JWKS entry without ``alg`` (several identity providers publish them so) or a PEM public
key does not say which algorithm it is for. Accepting every asymmetric algorithm for it
lets a token claim ``ES256`` for an RSA key, and PyJWT then fails with ``TypeError`` or
``InvalidKeyError`` instead of a verdict. The key's family answers the question: RSA takes
RS*/PS*, EC takes the one ES* of its curve, OKP takes EdDSA.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["algorithms_for_key"]

_RSA: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
_EC_BY_CURVE: Final = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


def algorithms_for_key(key: Any) -> tuple[str, ...]:
    """The algorithms ``key`` (a ``cryptography`` public key) can verify; empty if none."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

    if isinstance(key, rsa.RSAPublicKey):
        return _RSA
    if isinstance(key, ec.EllipticCurvePublicKey):
        alg = _EC_BY_CURVE.get(key.curve.name)
        return (alg,) if alg else ()
    if isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
        return ("EdDSA",)
    return ()
