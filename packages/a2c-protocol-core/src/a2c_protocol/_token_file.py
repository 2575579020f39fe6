"""``--token-file`` of both client CLIs: the token is read from a file at every (re)connect.

Short-lived tokens (a JWT minted by an OIDC issuer) are renewed by another process that
rewrites the file; each new connection then carries the current token. Only the file's
text, stripped of surrounding whitespace, is sent as ``auth.token``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["read_token_file", "token_file_auth", "token_flags_problem"]

#: A token file larger than this is not a token.
_MAX_BYTES = 65_536


def read_token_file(path: str) -> str:
    """The token in ``path``; :class:`ValueError` naming the file if it cannot be one."""
    try:
        with Path(path).open("rb") as handle:
            raw = handle.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"token file {path!r}: {exc.strerror or exc}") from exc
    if len(raw) > _MAX_BYTES:
        raise ValueError(f"token file {path!r} is larger than {_MAX_BYTES} bytes")
    try:
        token = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(f"token file {path!r} is not UTF-8 text") from None
    if not token:
        raise ValueError(f"token file {path!r} is empty")
    return token


def token_file_auth(path: str) -> Callable[[], dict[str, str]]:
    """``auth`` fields ``{"token": ...}`` read again from ``path`` at every call."""

    def fields() -> dict[str, str]:
        return {"token": read_token_file(path)}

    return fields


def token_flags_problem(token: str | None, token_file: str | None) -> str | None:
    """What is wrong with a CLI's ``--token`` / ``--token-file`` pair, or None.

    Both at once is refused (which one would win is a guess), and a token file is read once
    up front so that a typo is a usage error now rather than a refused connection later.
    """
    if token and token_file:
        return "give --token or --token-file (A2C_TOKEN or A2C_TOKEN_FILE), not both"
    if token_file:
        try:
            read_token_file(token_file)
        except ValueError as exc:
            return str(exc)
    return None
