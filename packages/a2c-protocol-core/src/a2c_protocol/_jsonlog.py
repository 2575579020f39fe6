"""One JSON object per log line (pure: it formats records, the caller owns the handler).

Keys: ``time`` (ISO 8601 UTC, milliseconds), ``level``, ``logger``, ``message``, then
every ``extra`` field the code passed (a dict passed as ``extra={"a2c": {...}}`` is
flattened into the object: that is how the roles attach context), then ``exception`` /
``stack`` when present. Values JSON cannot carry are rendered with ``str``. uvicorn's
``color_message`` (the message again, with ANSI colour escapes) is left out.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Final

from ._redact import standard_record_fields

__all__ = ["JsonLogFormatter"]

_RESERVED: Final = frozenset({"time", "level", "logger", "message", "exception", "stack"})
#: Extra fields that only repeat the message for a terminal (uvicorn's, with ANSI escapes).
_DROPPED: Final = frozenset({"color_message"})


class JsonLogFormatter(logging.Formatter):
    """Formats a record as a single-line JSON object."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        doc: dict[str, Any] = {
            "time": f"{stamp}.{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        standard = standard_record_fields()
        for key, value in record.__dict__.items():
            if key in standard or key in _DROPPED:
                continue
            if key == "a2c" and isinstance(value, dict):
                for inner, item in value.items():
                    doc.setdefault(str(inner) if inner not in _RESERVED else f"a2c_{inner}", item)
            else:
                doc.setdefault(key if key not in _RESERVED else f"extra_{key}", value)
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            doc["exception"] = record.exc_text
        if record.stack_info:
            doc["stack"] = self.formatStack(record.stack_info)
        return json.dumps(doc, default=str, ensure_ascii=False)
