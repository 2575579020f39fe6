"""``a2c-agent put COMPUTER FILE [--name NAME]``: upload one file to a Computer.

The file is checked before connecting (it must be a readable, non-empty regular file);
a progress bar goes to stderr when that is a terminal; the output is where the file landed
on the Computer (JSON: ``landing_path``, ``size``, ``sha256``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from a2c_agent._cli._files import ProgressBar

if TYPE_CHECKING:
    from a2c_agent._agent import AsyncAgent

__all__ = ["add_put_parser", "put_command", "put_problem", "render_put"]


def add_put_parser(commands: Any) -> None:
    """The ``put`` subcommand on the CLI's subparsers."""
    put = commands.add_parser(
        "put", help="upload a file to a Computer's landing dir (SHA-256 checked)"
    )
    put.add_argument("computer")
    put.add_argument("file", metavar="FILE", help="the file to upload")
    put.add_argument("--name", dest="put_name", help="the name to ask for (default: FILE's name)")


def put_problem(args: argparse.Namespace) -> str | None:
    """Why FILE cannot be uploaded (one line, no usage: the command was typed right),
    checked before connecting; None when it can."""
    path = Path(args.file)
    try:
        st = path.stat()
    except FileNotFoundError:
        return f"put: {args.file} does not exist"
    except OSError as exc:
        return f"put: {args.file} cannot be read: {exc.strerror or exc}"
    if path.is_dir():
        return f"put: {args.file} is a directory (upload one file; archive a directory first)"
    if not path.is_file():
        return f"put: {args.file} is not a regular file"
    if st.st_size == 0:
        return f"put: {args.file} is empty (nothing to upload)"
    if not os.access(path, os.R_OK):
        return f"put: {args.file} is not readable"
    return None


async def put_command(agent: AsyncAgent, args: argparse.Namespace) -> dict[str, Any]:
    bar = ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    try:
        landed = await agent.put_blob(
            args.computer, Path(args.file), name_hint=args.put_name,
            progress=bar.update if bar is not None else None,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.finish()
    return {"landing_path": landed.landing_path, "size": landed.total_size,
            "sha256": landed.sha256}  # fmt: skip


def render_put(data: dict[str, Any]) -> str:
    return str(data["landing_path"])
