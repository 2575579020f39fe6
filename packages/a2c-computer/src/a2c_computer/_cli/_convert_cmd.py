"""``a2c-computer config convert``: an ``mcpServers`` file, written in this Computer's format.

Rules:

* the input must have the ``mcpServers`` shape (_foreign.py converts it); a file already
  in our format, or one with an entry that cannot be converted, is a usage error (exit 2)
  listing every problem, and nothing is written;
* the result is checked by :func:`load_config` before it is written, so what is written
  always loads;
* the output goes to stdout, or to ``-o OUT``: a new file in an existing directory (parents
  are never created); an existing OUT is replaced only with ``--overwrite``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from a2c_computer._config import convert_mcp_servers, is_mcp_servers_document, load_config
from a2c_computer._exceptions import ConfigError

__all__ = ["convert_hint", "is_mcp_servers_file", "run_convert"]

EXIT_OK = 0
EXIT_USAGE = 2


def convert_hint(path: str) -> str:
    """How to get ``path`` (an mcpServers file) into the format that has ``tool_prefix``."""
    return (
        f"{path} has the mcpServers shape, which has no tool_prefix, tool_meta or other keys "
        f"of this Computer: convert it first (a2c-computer config convert {path} -o "
        "computer.json), then edit and use the converted file"
    )


def is_mcp_servers_file(path: str) -> bool:
    """Whether the JSON file at ``path`` has the mcpServers shape (False when unreadable)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return is_mcp_servers_document(data)


def _fail(message: str) -> int:
    print(f"a2c-computer: config convert: {message}", file=sys.stderr)
    return EXIT_USAGE


def _output_problem(output: str, overwrite: bool) -> str | None:
    target = Path(output)
    if target.is_dir():
        return f"-o {output}: is a directory; give a file name"
    parent = target.parent
    if not parent.is_dir():
        return f"-o {output}: directory {str(parent)!r} does not exist (create it first)"
    if os.path.lexists(target) and not overwrite:
        return f"-o {output}: exists; not overwriting it (pass --overwrite to replace it)"
    return None


def _converted(path: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"
    except ValueError as exc:
        return None, f"{path} is not valid JSON: {exc}"
    if not is_mcp_servers_document(data):
        shape = (
            "has 'servers': it is already in this Computer's format"
            if (isinstance(data, dict) and "servers" in data)
            else "has no 'mcpServers' object"
        )
        return None, f"{path} {shape}; nothing to convert"
    converted, problems = convert_mcp_servers(data)
    if problems:
        lines = "".join(f"\n  {e.path}: {e.problem}" for e in problems)
        return None, f"{path} cannot be converted:{lines}"
    try:
        load_config(converted)
    except ConfigError as exc:
        return None, f"{path} converts to an invalid configuration: {exc}"
    return converted, None


def run_convert(path: str, output: str | None, *, overwrite: bool) -> int:
    """Convert ``path``; print the result or write it to ``output``; returns the exit status."""
    if output is not None and (problem := _output_problem(output, overwrite)) is not None:
        return _fail(problem)
    converted, problem = _converted(path)
    if converted is None:
        return _fail(problem or "cannot convert")
    text = json.dumps(converted, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        with Path(output).open("w" if overwrite else "x", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        print(f"a2c-computer: config convert: cannot write {output}: {exc}", file=sys.stderr)
        return 1
    count = len(converted["servers"])
    print(
        f"a2c-computer: wrote {count} server(s) to {output}; their tools need confirmation "
        "until you set auto_apply (default_tool_meta or tool_meta)",
        file=sys.stderr,
    )
    return EXIT_OK
