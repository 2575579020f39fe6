"""A stdio MCP server's stderr, one log record per line (so a JSON log stays JSON).

Rules:

* each stdio MCP server gets its own pipe as stderr; a reader thread turns every line into
  one record on logger ``a2c_computer.mcp_stderr.<server>`` with the field ``mcp_server``;
* the level is WARNING when the line looks like a problem (``error``, ``warning``,
  ``critical``, ``fatal``, ``traceback``, ``exception``), INFO otherwise;
* lines are decoded as UTF-8 with replacement and cut at :data:`MAX_LINE` characters;
  the records pass the same redaction as every other log line;
* the Computer's copy of the pipe's write end is closed when the session ends; the reader
  ends when the MCP server (and anything that inherited its stderr) has exited.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Iterator
from typing import Final, TextIO

__all__ = ["MAX_LINE", "stderr_level", "stderr_pipe"]

MAX_LINE: Final = 8192
_PROBLEM: Final = re.compile(r"error|warn|critical|fatal|traceback|exception", re.IGNORECASE)


def stderr_level(line: str) -> int:
    """The level of one stderr line."""
    return logging.WARNING if _PROBLEM.search(line) else logging.INFO


def _pump(fd: int, server: str) -> None:
    target = logging.getLogger(f"a2c_computer.mcp_stderr.{server}")
    extra = {"a2c": {"mcp_server": server}}
    with os.fdopen(fd, "rb") as stream:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not line.strip():
                continue
            if len(line) > MAX_LINE:
                line = line[:MAX_LINE] + " [cut]"
            target.log(stderr_level(line), "%s", line, extra=extra)


@contextlib.contextmanager
def stderr_pipe(server: str) -> Iterator[TextIO]:
    """A writable file to give MCP server ``server`` as its stderr, logged line by line."""
    read_fd, write_fd = os.pipe()
    thread = threading.Thread(
        target=_pump, args=(read_fd, server), name=f"mcp-stderr-{server}", daemon=True
    )
    thread.start()
    writer = os.fdopen(write_fd, "w")
    try:
        yield writer
    finally:
        writer.close()
