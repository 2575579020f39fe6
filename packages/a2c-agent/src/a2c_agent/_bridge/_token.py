"""The bearer token of the HTTP bridge when none is given: made up, and left in a file.

Rules (as notebook servers do):

* ``a2c-agent mcp --http`` without ``--http-token`` (or ``A2C_MCP_HTTP_TOKEN``) and without
  ``--no-token`` makes a random token (32 bytes, URL-safe): a loopback port is reachable
  by every local account, and without a token each of them could use the office's tools;
* the token is written to ``mcp-http-PORT.token`` in the user's runtime directory
  (``$XDG_RUNTIME_DIR/a2c-agent``, else ``$XDG_STATE_HOME/a2c-agent``, else
  ``~/.local/state/a2c-agent``), the directory made 0700 and the file 0600, and removed
  when the bridge stops; stderr says where it is and how a host sends it (``Authorization:
  Bearer <token>``), never the token itself;
* ``--no-token`` serves without one on loopback, with a WARNING.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

__all__ = ["new_token", "remove_token", "token_dir", "token_path", "write_token"]


def new_token() -> str:
    """A random bearer token."""
    return secrets.token_urlsafe(32)


def token_dir(environ: Mapping[str, str], home: Path) -> Path:
    """Where the token file goes (pure: the environment and the home directory in)."""
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute():
        return Path(runtime) / "a2c-agent"
    state = environ.get("XDG_STATE_HOME")
    base = Path(state) if state and Path(state).is_absolute() else home / ".local" / "state"
    return base / "a2c-agent"


def token_path(directory: Path, port: int) -> Path:
    """The token file of the bridge listening on ``port``."""
    return directory / f"mcp-http-{port}.token"


def write_token(path: Path, token: str) -> None:
    """Write ``token`` to ``path``, readable by its owner only (the directory too).

    Raises OSError when the directory is another user's or open to others: a token written
    there could be read, or the file swapped, by them.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.parent.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise OSError(f"{path.parent} is not a directory of this user: the token is not written")
    if info.st_mode & 0o077:
        path.parent.chmod(0o700)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a file left by a bridge that was killed on this port
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")


def remove_token(path: Path) -> None:
    """Remove the token file (the bridge stopped: its token is no use any more)."""
    with contextlib.suppress(OSError):
        path.unlink()
