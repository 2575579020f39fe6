"""``a2c-computer landed list | clean``: what Agents uploaded to the landing dir.

::

    a2c-computer landed list  --landing-dir DIR [--agent NAME] [--json]
    a2c-computer landed clean --landing-dir DIR (--older-than AGE | --agent NAME | --all)
                              [--dry-run]

Both read the directory itself (``A2C_LANDING_DIR`` when no flag), so they work whether a
Computer runs on it or not; a running Computer counts the room ``clean`` made before it
refuses an upload for room (and once a minute anyway). ``clean`` removes regular files
directly in the dir only: subdirectories, links (never followed) and partial uploads in
progress stay.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from a2c_computer._exceptions import ConfigError

from ._budget import Entry
from ._fs import LandingDir
from ._options import age, checked_arg

__all__ = ["add_landed_parser", "run_landed"]


def add_landed_parser(sub: Any) -> argparse.ArgumentParser:
    """The ``landed`` command and its two subcommands."""
    landed: argparse.ArgumentParser = sub.add_parser(
        "landed", help="list or clean the files Agents uploaded to the landing dir"
    )
    commands = landed.add_subparsers(dest="landed_command", metavar="{list,clean}")
    listing = commands.add_parser(
        "list", help="the landed files, oldest first: age, size, bytes on disk, Agent, name"
    )
    listing.add_argument("--json", action="store_true", help="one JSON array instead of a table")
    clean = commands.add_parser(
        "clean",
        help="remove landed files (regular files directly in the dir) by age or Agent",
        description="Removes the regular files directly in the landing dir that match every "
        "filter given; subdirectories, links and uploads in progress stay. A running "
        "Computer sees the room at its next count (before refusing an upload for room).",
    )
    clean.add_argument(
        "--older-than",
        type=checked_arg(age, "AGE"),
        metavar="AGE",
        help="modified longer ago than AGE (90m, 7d)",
    )
    clean.add_argument("--all", action="store_true", help="every landed file")
    clean.add_argument("--dry-run", action="store_true", help="only list what would go")
    for command in (listing, clean):
        command.add_argument(
            "--landing-dir", dest="landing_landing_dir", metavar="DIR",
            help="the Computer's landing dir (env A2C_LANDING_DIR)",
        )  # fmt: skip
        command.add_argument("--agent", metavar="NAME", help="only what this Agent landed")
    return landed


def run_landed(args: argparse.Namespace) -> int:
    """Run ``landed list`` or ``landed clean``; the exit status."""
    if args.landed_command is None:
        raise ConfigError(
            "landed needs a command: list or clean (see 'a2c-computer landed --help')"
        )
    directory = args.landing_landing_dir
    if not directory:
        raise ConfigError("landed needs --landing-dir DIR (or A2C_LANDING_DIR)")
    landing = LandingDir(Path(directory).expanduser().resolve())
    problem = landing.problem()
    if problem is not None and not (args.landed_command == "list" and landing.root.is_dir()):
        raise ConfigError(problem)
    files = [e for e in landing.scan().entries.values() if e.regular]
    if args.agent is not None:
        files = [e for e in files if e.agent == args.agent]
    files.sort(key=lambda e: (e.mtime, e.name))
    if args.landed_command == "list":
        _print_list(landing, files, as_json=args.json)
        return 0
    if args.older_than is None and args.agent is None and not args.all:
        raise ConfigError("landed clean needs --older-than AGE, --agent NAME or --all")
    if args.older_than is not None:
        cutoff = time.time() - args.older_than
        files = [e for e in files if e.mtime < cutoff]
    if args.dry_run:
        for entry in files:
            print(entry.name)
        print(f"would remove {_files(len(files))} ({_total(files)} bytes on disk)")
        return 0
    removed = [e for e in files if landing.remove(e)]
    print(f"removed {_files(len(removed))} ({_total(removed)} bytes on disk) from {landing.root}")
    if len(removed) < len(files):
        print(f"{len(files) - len(removed)} changed or went away meanwhile: left alone",
              file=sys.stderr)  # fmt: skip
    return 0


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _total(entries: list[Entry]) -> int:
    return sum(e.allocated for e in entries)


def _print_list(landing: LandingDir, files: list[Entry], *, as_json: bool) -> None:
    if as_json:
        rows = [{"name": e.name, "size": e.size, "allocated": e.allocated, "mtime": e.mtime,
                 "agent": e.agent} for e in files]  # fmt: skip
        print(json.dumps(rows, indent=2))
        return
    now = time.time()
    if files:
        print(f"{'AGE':>6}  {'SIZE':>12}  {'ON DISK':>12}  {'AGENT':<20}  NAME")
    for e in files:
        print(f"{_human_age(now - e.mtime):>6}  {e.size:>12}  {e.allocated:>12}  "
              f"{e.agent or '-':<20}  {e.name}")  # fmt: skip
    print(f"{_files(len(files))}, {_total(files)} bytes on disk in {landing.root}")


def _human_age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(int(seconds), 0)}s"
