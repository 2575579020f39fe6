"""Secret redaction for log records and any other text (pure: no handlers, no I/O).

Rules:

* a registered secret is masked wherever it appears, also in the forms a transport or a
  ``repr`` gives it: percent-encoded (``quote`` / ``quote_plus``), JSON-escaped and
  ``repr``-escaped;
* values shorter than ``min_length`` are not registered: masking ``"on"`` or ``"1"`` in
  every line would ruin the logs and protect nothing;
* a token a peer *sends* is not known in advance: every ``token`` field of a JSON object or
  Python dict rendered in text (``"token": "..."``) is masked too;
* a :class:`RedactingFilter` rewrites a record before any formatter sees it: the message
  with its arguments, the exception and stack text, and every ``extra`` field.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import traceback
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import quote, quote_plus

__all__ = ["REDACTED", "RedactingFilter", "SecretRedactor", "standard_record_fields"]

REDACTED: Final = "[redacted]"

#: ``"token": "…"`` / ``'token': '…'`` as JSON or a Python repr shows it.
_TOKEN_FIELD: Final = re.compile(r"""(["'](?:token)["']\s*:\s*)(["'])(?:\\.|(?!\2).)*\2""")

_STANDARD: Final = frozenset(
    logging.LogRecord("x", logging.INFO, "x", 0, "", None, None).__dict__
) | {"message", "asctime", "taskName"}


def standard_record_fields() -> frozenset[str]:
    """Attribute names every ``LogRecord`` has; anything else came from ``extra``."""
    return _STANDARD


def _mask_token_field(match: re.Match[str]) -> str:
    quote_char = match.group(2)
    return f"{match.group(1)}{quote_char}{REDACTED}{quote_char}"


def _variants(value: str) -> set[str]:
    forms = {value, quote(value, safe=""), quote(value), quote_plus(value)}
    forms.add(json.dumps(value)[1:-1])
    forms.add(json.dumps(value, ensure_ascii=False)[1:-1])
    forms.add(repr(value)[1:-1])
    return forms


class SecretRedactor:
    """Masks registered secret values (and ``token`` fields) in text. Thread-safe."""

    def __init__(self, secrets: Iterable[str] = (), *, min_length: int = 4) -> None:
        self._min_length = min_length
        self._secrets: set[str] = set()
        self._lock = threading.Lock()
        self._pattern: re.Pattern[str] | None = None
        for secret in secrets:
            self.add(secret)

    def add(self, secret: object) -> None:
        """Register ``secret`` (non-strings and short values are ignored)."""
        if not isinstance(secret, str) or len(secret) < self._min_length:
            return
        with self._lock:
            fresh = {v for v in _variants(secret) if len(v) >= self._min_length}
            if fresh <= self._secrets:
                return
            self._secrets |= fresh
            # Longest first, so a secret that contains another is masked whole.
            ordered = sorted(self._secrets, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(s) for s in ordered))

    def __len__(self) -> int:
        return len(self._secrets)

    def redact(self, text: str) -> str:
        """``text`` with every registered secret and every ``token`` field masked."""
        pattern = self._pattern  # one read: add() may swap it concurrently
        if pattern is not None:
            text = pattern.sub(REDACTED, text)
        if "token" in text:
            text = _TOKEN_FIELD.sub(
                lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}{m.group(2)}", text
            )
        return text

    def redact_value(self, value: Any) -> Any:
        """``value`` with strings inside (dicts, lists, tuples) redacted."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.redact_value(v) for v in value)
        return value


class RedactingFilter(logging.Filter):
    """A handler filter that redacts a record in place before it is formatted.

    Install it on every handler: filters on a handler also see records propagated from
    third-party loggers (a logger's own filters do not).
    """

    def __init__(self, redactor: SecretRedactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        redact = self.redactor.redact
        try:
            message = record.getMessage()
        except Exception:  # a malformed %-format: keep what can be shown
            message = f"{record.msg!r} % {record.args!r}"
        record.msg = redact(message)
        record.args = None
        if record.exc_info and record.exc_info[0] is not None:
            text = record.exc_text or "".join(traceback.format_exception(*record.exc_info))
            record.exc_text = redact(text.rstrip("\n"))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        for key, value in list(record.__dict__.items()):
            if key not in _STANDARD:
                record.__dict__[key] = self.redactor.redact_value(value)
        return True
