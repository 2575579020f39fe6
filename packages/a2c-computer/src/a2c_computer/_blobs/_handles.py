"""Blob handles: opaque, unguessable strings bound to one Computer (spec §5.2).

Rules:

* a handle names a *source* as ``(kind, payload)``: ``kind`` says which producer minted it
  (``"spool"`` for tool results, e.g. ``"skill"`` for skill files), ``payload`` is that
  producer's own bytes; the Agent never parses either;
* every handle carries an HMAC-SHA256 tag over the owning Computer's name, the kind and the
  payload, keyed by a secret only this Computer holds: a forged, altered, truncated or
  foreign handle (another Computer's, even on the same host) does not verify;
* a handle that does not verify is ``invalid_handle``; nothing else is learnt from it;
* the codec is pure (no I/O); the key is supplied by the store.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

__all__ = ["HANDLE_PREFIX", "MAX_HANDLE_CHARS", "HandleCodec"]

#: Every handle this Computer mints starts with this (a format version, not a promise).
HANDLE_PREFIX = "a2cb1."
#: Longer strings are refused before any decoding work.
MAX_HANDLE_CHARS = 2048
_TAG_BYTES = 16
_MAX_KIND = 32


class HandleCodec:
    """Mints and opens handles for one Computer with one secret key."""

    def __init__(self, key: bytes, owner: str) -> None:
        if len(key) < 16:
            raise ValueError("a handle key needs at least 16 bytes")
        self._key = key
        self._owner = owner.encode("utf-8")

    def _tag(self, kind: bytes, payload: bytes) -> bytes:
        message = b"\0".join((self._owner, kind, payload))
        return hmac.new(self._key, message, hashlib.sha256).digest()[:_TAG_BYTES]

    def mint(self, kind: str, payload: bytes) -> str:
        """A handle for ``payload`` of producer ``kind``."""
        raw_kind = kind.encode("ascii")
        if not 0 < len(raw_kind) <= _MAX_KIND or b"\0" in raw_kind:
            raise ValueError(f"invalid blob kind {kind!r}")
        body = bytes([len(raw_kind)]) + raw_kind + payload
        token = base64.urlsafe_b64encode(self._tag(raw_kind, payload) + body).rstrip(b"=")
        handle = HANDLE_PREFIX + token.decode("ascii")
        if len(handle) > MAX_HANDLE_CHARS:
            raise ValueError("blob handle payload too long")
        return handle

    def open(self, handle: object) -> tuple[str, bytes] | None:
        """``(kind, payload)`` of a handle this codec minted, else None."""
        if not isinstance(handle, str) or len(handle) > MAX_HANDLE_CHARS:
            return None
        if not handle.startswith(HANDLE_PREFIX):
            return None
        token = handle[len(HANDLE_PREFIX) :]
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError):
            return None
        if len(raw) < _TAG_BYTES + 2:
            return None
        tag, body = raw[:_TAG_BYTES], raw[_TAG_BYTES:]
        kind_len = body[0]
        if not 0 < kind_len <= _MAX_KIND or len(body) < 1 + kind_len:
            return None
        raw_kind, payload = body[1 : 1 + kind_len], body[1 + kind_len :]
        if not hmac.compare_digest(tag, self._tag(raw_kind, payload)):
            return None
        # Re-encoding must give the same string: no alternative spellings of one handle.
        try:
            kind = raw_kind.decode("ascii")
        except UnicodeDecodeError:
            return None
        if self.mint(kind, payload) != handle:
            return None
        return kind, payload
