"""Structured logging: a message plus key=value context (sid, name, office, req_id…).

Fields are appended to the text so they survive any formatter, and attached as
``record.a2c`` (a dict) for structured handlers. Callers never pass tokens or auth
objects here.

:func:`configure_logging` (used by the command line) owns every handler: one on the root
logger, so uvicorn's and the libraries' records pass the same :class:`RedactingFilter`
(every secret of the settings and any ``token`` field a client sends are masked) and the same
format (text or JSON lines). uvicorn's frame tracing stays off unless ``log_protocol``.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from typing import TYPE_CHECKING, Any

from a2c_protocol import JsonLogFormatter, RedactingFilter, SecretRedactor

from ._audit_calls import configure_call_audit

if TYPE_CHECKING:
    from a2c_server._settings import ServerSettings

__all__ = [
    "UTCFormatter", "announce", "cause", "configure_logging", "log", "server_secrets",
    "uvicorn_log_level",
]  # fmt: skip


def _render(value: Any) -> str:
    text = str(value)
    if not text or any(c.isspace() or c in '"=' for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def log(logger: logging.Logger, level: int, message: str, **fields: Any) -> None:
    """Log ``message`` with ``fields`` (None values are left out)."""
    if not logger.isEnabledFor(level):
        return
    context = {k: v for k, v in fields.items() if v is not None}
    suffix = " ".join(f"{k}={_render(v)}" for k, v in context.items())
    logger.log(level, f"{message} {suffix}" if suffix else message, extra={"a2c": context})


def cause(exc: BaseException) -> str:
    """``Type: message`` of ``exc`` for a log field (just the type when the message is empty)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class UTCFormatter(logging.Formatter):
    """ISO 8601 UTC timestamps, as the security-logging guidance asks."""

    @staticmethod
    def converter(secs: float | None = None, /) -> time.struct_time:
        return time.gmtime(secs)

    def __init__(self) -> None:
        super().__init__(
            "%(asctime)s.%(msecs)03dZ %(levelname)s %(name)s %(message)s",
            datefmt="%Y-%m-%dT%H:%M:%S",
        )


def uvicorn_log_level(settings: ServerSettings) -> str:
    """uvicorn's level: frame tracing (its DEBUG and TRACE) only with ``log_protocol``."""
    if settings.log_protocol:
        return "trace"
    return "info" if settings.log_level == "DEBUG" else settings.log_level.lower()


def server_secrets(settings: ServerSettings) -> list[str]:
    """Every secret the Server holds, for the redactor: a secret a client echoes back (in a
    URL the access log prints, say) or one that reaches a traceback never reaches the log."""
    from urllib.parse import urlsplit

    secrets = [settings.auth_token, settings.admin_token, settings.jwt_secret,
               settings.redis_password, settings.redis_sentinel_password]  # fmt: skip
    if settings.redis_url:
        with contextlib.suppress(ValueError):
            secrets.append(urlsplit(settings.redis_url).password)
    return [s for s in secrets if s]


def configure_logging(settings: ServerSettings) -> None:
    """Send every log record to stderr, redacted, in ``settings.log_format``."""
    redactor = SecretRedactor(server_secrets(settings))
    redacting = RedactingFilter(redactor)
    handler = logging.StreamHandler(sys.stderr)
    formatter = JsonLogFormatter() if settings.log_format == "json" else UTCFormatter()
    handler.setFormatter(formatter)
    handler.addFilter(redacting)
    root = logging.getLogger()
    # Replace our own earlier handler (a second call), keep anyone else's (e.g. a test's).
    root.handlers[:] = [h for h in root.handlers if not getattr(h, "_a2c_owned", False)]
    handler._a2c_owned = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    own = logging.getLogger("a2c_server")
    own.handlers.clear()
    own.setLevel(settings.log_level)
    own.propagate = True
    configure_call_audit(settings.audit_calls, formatter, redacting)
    # Handlers installed by anyone else (a library, a test) get the filter too.
    for logger in [root, *logging.Logger.manager.loggerDict.values()]:
        for other in getattr(logger, "handlers", ()):
            if redacting not in other.filters:
                other.addFilter(redacting)


def announce(settings: ServerSettings, banner: str) -> None:
    """The start-up banner: a plain stderr line, or a log record when lines must be JSON."""
    if settings.log_format == "json":
        logging.getLogger("a2c_server").info(banner)
    else:
        print(banner, file=sys.stderr)
