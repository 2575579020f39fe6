"""Secret redaction of log records and the JSON log format (pure: records in, text out)."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from a2c_protocol import JsonLogFormatter, RedactingFilter, SecretRedactor

SECRET = "s3cr3t/p@ss word+42"


def _record(msg: str, *args: object, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("third.party", logging.WARNING, __file__, 1, msg, args, None)
    record.__dict__.update(extra)
    return record


@pytest.mark.parametrize(
    "text",
    [
        f"POST http://h/mcp?api_key={SECRET}",
        "POST http://h/mcp?api_key=s3cr3t%2Fp%40ss%20word%2B42",
        "GET http://h/s3cr3t/p%40ss%20word%2B42/x",
        "form s3cr3t%2Fp%40ss+word%2B42",
        f"json {json.dumps({'k': SECRET})}",
        f"repr {[SECRET]!r}",
        f"FileNotFoundError: '/opt/{SECRET}/bin'",
    ],
)
def test_every_encoding_of_a_secret_is_masked(text: str) -> None:
    redactor = SecretRedactor([SECRET])
    out = redactor.redact(text)
    assert "s3cr3t" not in out and "[redacted]" in out


def test_short_and_non_string_values_are_not_registered() -> None:
    redactor = SecretRedactor(["on", 1234])  # type: ignore[list-item]
    assert len(redactor) == 0
    assert redactor.redact("turn on 1234") == "turn on 1234"


def test_a_longer_secret_containing_a_shorter_one_is_masked_whole() -> None:
    redactor = SecretRedactor(["abcd", "abcdefgh"])
    assert redactor.redact("x abcdefgh y") == "x [redacted] y"


def test_token_fields_are_masked_without_knowing_the_token() -> None:
    redactor = SecretRedactor()
    wire = '< TEXT \'40/smcp,{"token":"peer-sent-\\"x","role":"agent"}\''
    out = redactor.redact(wire)
    assert "peer-sent" not in out and '"role":"agent"' in out
    assert "tok-9" not in redactor.redact(str({"token": "tok-9", "a": 1}))


def test_filter_redacts_message_args_exception_and_extras() -> None:
    redactor = SecretRedactor([SECRET])
    try:
        raise FileNotFoundError(f"/opt/{SECRET}")
    except FileNotFoundError:
        exc_info = sys.exc_info()
    record = _record("url %s", f"http://u:{SECRET}@h/", ctx={"url": f"x?{SECRET}"})
    record.exc_info = exc_info
    assert RedactingFilter(redactor).filter(record)
    text = logging.Formatter("%(message)s").format(record)
    assert "s3cr3t" not in text and "FileNotFoundError" in text
    assert "s3cr3t" not in json.dumps(record.__dict__["ctx"])


def test_json_formatter_one_object_per_line_with_extras() -> None:
    record = _record("joined %s", "o-1", a2c={"sid": "abc", "office": "o-1"}, tool="echo")
    line = JsonLogFormatter().format(record)
    assert "\n" not in line
    doc = json.loads(line)
    assert doc["message"] == "joined o-1" and doc["level"] == "WARNING"
    assert doc["logger"] == "third.party" and doc["time"].endswith("Z")
    assert doc["sid"] == "abc" and doc["office"] == "o-1" and doc["tool"] == "echo"


def test_json_formatter_keeps_exceptions_on_one_line() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = _record("failed")
        record.exc_info = sys.exc_info()
    line = JsonLogFormatter().format(record)
    assert "\n" not in line and "ValueError: boom" in json.loads(line)["exception"]
