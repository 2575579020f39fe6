"""The landing flags of ``a2c-computer run`` and ``check`` and their environment variables."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from a2c_computer._exceptions import ConfigError

from ._settings import LandingSettings

__all__ = ["LANDING_OPTIONS", "add_landing_flags", "describe_landing", "landing_settings"]


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("must be more than 0")
    return value


#: ``(flag, LandingSettings field, env var, convert, help)``; unset ones keep the default.
LANDING_OPTIONS: tuple[tuple[str, str, str, Callable[[str], Any], str], ...] = (
    ("--landing-dir", "landing_dir", "A2C_LANDING_DIR", str,
     "directory client:put_blob uploads are written to; without it every upload is refused"),
    ("--landing-max-bytes", "max_upload_bytes", "A2C_LANDING_MAX_BYTES", _positive_int,
     "largest upload, bytes (default 104857600)"),
    ("--landing-max-total-bytes", "max_total_bytes", "A2C_LANDING_MAX_TOTAL_BYTES",
     _positive_int, "what the landing dir may hold in all, bytes (default 1073741824)"),
)  # fmt: skip


def add_landing_flags(parser: argparse.ArgumentParser) -> None:
    for flag, field, env, convert, text in LANDING_OPTIONS:
        parser.add_argument(
            flag, dest=f"landing_{field}", metavar=field.upper(), type=_checked(convert, field),
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
    limits = (f"at most {settings.max_upload_bytes} bytes each, "
              f"{settings.max_total_bytes} in all")  # fmt: skip
    if not path.is_dir():
        return f"uploads: landing dir {path} does not exist: every upload is refused", True
    if not os.access(path, os.W_OK | os.X_OK):
        return f"uploads: landing dir {path} is not writable: every upload is refused", True
    return f"uploads: land in {path} ({limits})", False


def _checked(convert: Callable[[str], Any], what: str) -> Callable[[str], Any]:
    def check(text: str) -> Any:
        try:
            return convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from exc

    check.__name__ = what
    return check
