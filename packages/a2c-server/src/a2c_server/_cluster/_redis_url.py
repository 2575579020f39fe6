"""Where the registry's Redis is: one server (``redis://``) or a service behind Sentinel.

``redis+sentinel://[USER:PASSWORD@]HOST:PORT,HOST:PORT,.../DB/SERVICE`` is the spelling
python-socketio's ``AsyncRedisManager`` reads, so one ``--redis`` URL serves both the
Socket.IO manager and the registry. The password in the URL is the primary's (the
manager gives it to the primary, never to the sentinels); a password the URL does not
carry comes from the settings (``A2C_SERVER_REDIS_PASSWORD``, and
``A2C_SERVER_REDIS_SENTINEL_PASSWORD`` for sentinels that require one), so no secret has
to sit in a command line. Pure: parsing only, no connection.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import attrs

__all__ = ["SENTINEL_SCHEME", "RedisTarget", "parse_redis_target"]

SENTINEL_SCHEME = "redis+sentinel"


@attrs.frozen
class RedisTarget:
    """A parsed ``--redis`` URL with the passwords it will be used with."""

    url: str = attrs.field(repr=False)
    #: (host, port) of each sentinel; empty for a plain ``redis://`` URL.
    sentinels: tuple[tuple[str, int], ...] = ()
    service: str | None = None
    db: int = 0
    username: str | None = None
    password: str | None = attrs.field(default=None, repr=False)
    sentinel_password: str | None = attrs.field(default=None, repr=False)

    @property
    def is_sentinel(self) -> bool:
        return bool(self.sentinels)

    def primary_options(self) -> dict[str, Any]:
        """Connection options of the primary the URL does not already carry."""
        options: dict[str, Any] = {}
        if self.password is not None and not _url_password(self.url):
            options["password"] = self.password
        if self.is_sentinel:
            options["db"] = self.db
            if self.username is not None:
                options["username"] = self.username
            if self.password is not None:
                options["password"] = self.password
        return options

    def sentinel_options(self) -> dict[str, Any]:
        """Connection options of the sentinels (their password, when they need one)."""
        return {} if self.sentinel_password is None else {"password": self.sentinel_password}


def _url_password(url: str) -> str | None:
    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return unquote(password) if password else None


def parse_redis_target(
    url: str, *, password: str | None = None, sentinel_password: str | None = None
) -> RedisTarget:
    """Parse ``url``; ``password`` / ``sentinel_password`` apply where the URL has none.

    Raises ``ValueError`` naming what is wrong (never echoing a password).
    """
    parts = urlsplit(url)
    if parts.scheme != SENTINEL_SCHEME:
        return RedisTarget(url=url, password=_url_password(url) or password,
                           sentinel_password=sentinel_password)  # fmt: skip
    hosts = parts.netloc.rpartition("@")[2]
    sentinels: list[tuple[str, int]] = []
    for item in hosts.split(","):
        host, sep, port = item.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"sentinel address {item.strip()!r} is not HOST:PORT")
        sentinels.append((host.strip("[]"), int(port)))
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) != 2 or not segments[0].isdigit():
        raise ValueError(
            "a redis+sentinel:// URL ends in /DB/SERVICE (the database number and the "
            "service name the sentinels monitor)"
        )
    return RedisTarget(
        url=url,
        sentinels=tuple(sentinels),
        service=segments[1],
        db=int(segments[0]),
        username=unquote(parts.username) if parts.username else None,
        password=_url_password(url) or password,
        sentinel_password=sentinel_password,
    )
