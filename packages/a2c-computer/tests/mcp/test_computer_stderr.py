"""A stdio MCP server's stderr becomes one log record per line, naming the server."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading

import pytest

from a2c_computer._observe._stderr import stderr_level, stderr_pipe


def test_each_line_is_one_record_with_its_server_and_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_computer.mcp_stderr")
    done = threading.Event()

    class Done(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "last" in record.getMessage():
                done.set()

    marker = Done()
    # On the root logger after caplog's handler: set once caplog has the last record.
    logging.getLogger().addHandler(marker)
    try:
        script = "import sys; sys.stderr.write('hello\\n\\nError: bad\\r\\nx' * 1 + '\\xff last')"
        with stderr_pipe("desk") as errlog:
            subprocess.run([sys.executable, "-c", script], stderr=errlog, check=True)
        assert done.wait(10)
    finally:
        logging.getLogger().removeHandler(marker)
    records = [r for r in caplog.records if r.name == "a2c_computer.mcp_stderr.desk"]
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (logging.INFO, "hello"),
        (logging.WARNING, "Error: bad"),
        (logging.INFO, "x\xff last"),
    ]
    assert all(r.__dict__["a2c"] == {"mcp_server": "desk"} for r in records)


def test_problem_words_are_warnings() -> None:
    assert stderr_level("Traceback (most recent call last):") == logging.WARNING
    assert stderr_level("listening on stdio") == logging.INFO
