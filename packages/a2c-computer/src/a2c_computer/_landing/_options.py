"""The landing flags of ``a2c-computer run`` and ``check`` and their environment variables."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from a2c_computer._exceptions import ConfigError

from ._fs import LandingDir
from ._settings import LandingSettings

__all__ = [
    "LANDING_OPTIONS",
    "add_landing_flags",
    "age",
    "checked_arg",
    "describe_landing",
    "landing_settings",
]


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("must be more than 0")
    return value


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def age(text: str) -> float:
    """Seconds of ``90``, ``90s``, ``15m``, ``12h`` or ``7d`` (more than 0)."""
    number, unit = (text[:-1], text[-1]) if text[-1:] in _UNITS else (text, "s")
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        raise ValueError("not an age: a number of seconds, or with s, m, h or d") from None
    if not 0 < value < float("inf"):
        raise ValueError("must be more than 0")
    return value


#: ``(flag, LandingSettings field, env var, convert, help)``; unset ones keep the default.
LANDING_OPTIONS: tuple[tuple[str, str, str, Callable[[str], Any], str], ...] = (
    ("--landing-dir", "landing_dir", "A2C_LANDING_DIR", str,
     "directory client:put_blob uploads are written to; without it every upload is refused"),
    ("--landing-max-bytes", "max_upload_bytes", "A2C_LANDING_MAX_BYTES", _positive_int,
     "largest upload, bytes (default 104857600)"),
    ("--landing-max-total-bytes", "max_total_bytes", "A2C_LANDING_MAX_TOTAL_BYTES",
     _positive_int, "what the landing dir may hold in all, bytes allocated on disk "
     "(default 1073741824)"),
    ("--landing-max-files", "max_files", "A2C_LANDING_MAX_FILES", _positive_int,
     "how many files the landing dir may hold (default 10000)"),
    ("--landing-agent-max-bytes", "agent_max_bytes", "A2C_LANDING_AGENT_MAX_BYTES",
     _positive_int, "what one Agent's uploads may take on disk (default: no per-Agent limit)"),
    ("--landing-agent-max-files", "agent_max_files", "A2C_LANDING_AGENT_MAX_FILES",
     _positive_int, "how many files one Agent may have landed (default: no per-Agent limit)"),
    ("--landing-retention", "retention", "A2C_LANDING_RETENTION", age,
     "remove landed files older than this: 3600, 90m, 12h, 7d (default: keep them)"),
)  # fmt: skip


def add_landing_flags(parser: argparse.ArgumentParser) -> None:
    for flag, field, env, convert, text in LANDING_OPTIONS:
        parser.add_argument(
            flag, dest=f"landing_{field}", metavar=field.upper(), type=checked_arg(convert, field),
            help=f"{text} (env {env})",
        )  # fmt: skip


def landing_settings(args: argparse.Namespace) -> LandingSettings:
    """The LandingSettings of parsed (and environment-filled) arguments."""
    given = {
        field: getattr(args, f"landing_{field}")
        for _, field, *_ in LANDING_OPTIONS
        if getattr(args, f"landing_{field}", None) is not None
    }
    try:
        return LandingSettings(**given)
    except ValueError as exc:
        raise ConfigError(f"invalid landing setting: {exc}") from exc


def describe_landing(settings: LandingSettings) -> tuple[str, bool]:
    """One line for ``check`` about the landing setup, and whether it is a problem."""
    directory = settings.landing_dir
    if directory is None:
        return "uploads: off (no --landing-dir): client:put_blob is refused (4019 forbidden)", False
    path = Path(directory).resolve()
    problem = LandingDir(path).problem()
    if problem is not None:
        return f"uploads: {problem}: run refuses to start", True
    s = settings
    limits = (f"at most {s.max_upload_bytes} bytes each, {s.max_total_bytes} bytes on disk "
              f"and {s.max_files} files in all")  # fmt: skip
    if s.agent_max_bytes is not None or s.agent_max_files is not None:
        limits += (f"; per Agent {s.agent_max_bytes or 'any'} bytes, "
                   f"{s.agent_max_files or 'any'} files")  # fmt: skip
    keep = f"kept {s.retention:g}s" if s.retention is not None else "kept until removed"
    return f"uploads: land in {path} ({limits}; {keep})", False


def checked_arg(convert: Callable[[str], Any], what: str) -> Callable[[str], Any]:
    """``convert`` as an argparse ``type``: its ValueError becomes a usage error."""

    def check(text: str) -> Any:
        try:
            return convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from exc

    check.__name__ = what
    return check
