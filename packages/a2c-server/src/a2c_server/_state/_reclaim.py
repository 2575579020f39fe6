"""Taking a name back after a reconnect: whose hold a joining session may take over.

A client that loses its node (``kill -9``, a machine gone) reconnects through the balancer
to another node within a second, but its old session still holds its name (and, for an
Agent, the office's seat) until the dead node's heartbeat expires and a survivor reaps it
(``--node-ttl``). These rules let the *same* client take its name back at once, and
nobody else.

Rules:

* K1 A client may send ``auth.a2c_reclaim`` at connect: a secret it chose itself (32 to 256
  characters from ``[A-Za-z0-9_-]``), the same on every connect of one client instance and
  never shared (docs/compatibility.md; the clients' side is ``a2c_protocol._rejoin``).
  Anything else there is refused with 400.
* K2 The Server never keeps the secret: it keeps :func:`reclaim_key`, a SHA-256 of the
  authenticated identity and the secret, on the session's record, and never logs either.
* K3 A join whose name, or (for an Agent) whose office seat, is held by another session may
  take it over only when that session has the same key and the same role: the same client
  instance under the same identity, reconnecting after it lost that session. The holder is
  removed from the registry in the same atomic step as the join (the office hears it leave,
  then the new session enter) and is disconnected wherever it still is.
* K4 Without a key, with another key or another role, the join is refused as before (J5,
  J6): the name stays with its holder until that session disconnects or its node is reaped.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from a2c_protocol import RECLAIM_AUTH_KEY

from ._rules import Member

__all__ = ["may_reclaim", "reclaim_key", "reclaim_secret_problem"]

_SECRET: Final = re.compile(r"[A-Za-z0-9_-]{32,256}")


def reclaim_secret_problem(auth: object) -> str | None:
    """K1: why ``auth``'s reclaim secret is refused, or None (absent or well-formed)."""
    secret = auth.get(RECLAIM_AUTH_KEY) if isinstance(auth, dict) else None
    if secret is None or (isinstance(secret, str) and _SECRET.fullmatch(secret)):
        return None
    return f"auth.{RECLAIM_AUTH_KEY}, when given, must be 32 to 256 characters of [A-Za-z0-9_-]"


def reclaim_key(auth: object, subject: str) -> str | None:
    """K2: the key kept for a session (None when ``auth`` has no well-formed secret).

    The identity is part of it, so a secret that leaked is worth nothing without the
    holder's credentials too.
    """
    secret = auth.get(RECLAIM_AUTH_KEY) if isinstance(auth, dict) else None
    if not isinstance(secret, str) or not _SECRET.fullmatch(secret):
        return None
    return hashlib.sha256(f"{subject}\x00{secret}".encode()).hexdigest()


def may_reclaim(claimant: Member, holder: Member) -> bool:
    """K3/K4: whether ``claimant`` may take over what ``holder`` holds."""
    return (
        claimant.reclaim is not None
        and holder.sid != claimant.sid
        and holder.reclaim == claimant.reclaim
        and holder.role is not None
        and holder.role is claimant.role
    )
