"""``auth logout`` at the authorization server: token revocation (RFC 7009).

Rules:

* a stored sign-in keeps the authorization server's metadata from its discovery; when it
  advertises a ``revocation_endpoint``, the refresh token and then the access token are
  revoked there, the client authenticating as it does at the token endpoint
  (``client_secret_basic``, ``client_secret_post`` or a public client's ``client_id``);
* no endpoint: nothing is revoked, and the caller says the tokens stay valid until they
  expire; a failed revocation is reported with its reason, never hidden;
* nothing here logs or returns a token.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import attrs
import httpx2

__all__ = ["Revocation", "revoke_sign_in"]

_TIMEOUT = 10.0


@attrs.frozen
class Revocation:
    """What revoking one stored sign-in did."""

    #: the authorization server's revocation endpoint, None when it advertises none
    endpoint: str | None
    #: the kinds of token revoked ("refresh token", "access token")
    revoked: tuple[str, ...] = ()
    #: why a revocation failed, None when none did
    problem: str | None = None


def revoke_sign_in(record: Mapping[str, Any]) -> Revocation:
    """Revoke the tokens of one stored sign-in record at its authorization server."""
    metadata = record.get("server_metadata")
    endpoint = metadata.get("revocation_endpoint") if isinstance(metadata, Mapping) else None
    tokens = record.get("tokens")
    if not isinstance(endpoint, str) or not endpoint:
        return Revocation(None)
    if not isinstance(tokens, Mapping):
        return Revocation(endpoint)
    client = record.get("client")
    client = client if isinstance(client, Mapping) else {}
    revoked: list[str] = []
    # Synchronous: ``auth logout`` is a short command, also run from inside an event loop.
    with httpx2.Client(timeout=_TIMEOUT) as http:
        for hint, label in (("refresh_token", "refresh token"), ("access_token", "access token")):
            token = tokens.get(hint)
            if not isinstance(token, str) or not token:
                continue
            form, headers = _client_auth(client)
            form.update(token=token, token_type_hint=hint)
            try:
                answer = http.post(endpoint, data=form, headers=headers)
                if answer.status_code == 400 and "client_secret" not in form and not headers:
                    # The MCP SDK's reference authorization server wants the key even from a
                    # public client (an empty value); RFC 7009 servers never get this retry.
                    answer = http.post(endpoint, data={**form, "client_secret": ""})
            except httpx2.HTTPError as exc:
                return Revocation(endpoint, tuple(revoked), f"{type(exc).__name__}: {exc}")
            # RFC 7009 §2.2: 200 also for a token that was already invalid.
            if answer.status_code != 200:
                return Revocation(
                    endpoint, tuple(revoked), f"HTTP {answer.status_code} for the {label}"
                )
            revoked.append(label)
    return Revocation(endpoint, tuple(revoked))


def _client_auth(client: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    client_id = str(client.get("client_id") or "")
    secret = client.get("client_secret")
    method = client.get("token_endpoint_auth_method") or (
        "client_secret_basic" if secret else "none"
    )
    if method == "client_secret_basic" and isinstance(secret, str):
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
        return {}, {"Authorization": "Basic " + base64.b64encode(pair).decode()}
    form = {"client_id": client_id}
    if method == "client_secret_post" and isinstance(secret, str):
        form["client_secret"] = secret
    return form, {}
