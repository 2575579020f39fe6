"""Where each ``a2c-computer`` value comes from and how it is checked.

Rules:

* a flag wins over its environment variable; one set but blank is a usage error naming it;
* every value, from a flag or from the environment, is checked before anything starts; a
  bad one is a usage error (exit 2) naming where it came from, never a traceback;
* a Server URL without a scheme (``127.0.0.1:8000``) is refused with the fix
  (``http://127.0.0.1:8000``).

The flags themselves are declared by :mod:`._args`; ``ENV_OPTIONS`` names each one's
environment variables.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from a2c_computer._blobs import BlobSettings
from a2c_computer._exceptions import ConfigError
from a2c_computer._landing import LANDING_OPTIONS
from a2c_computer._skills import SkillSettings, default_skill_settings
from a2c_protocol._lines import KNOWN_LINES

__all__ = [
    "BLOB_OPTIONS",
    "ENV_OPTIONS",
    "LANDING_ENV",
    "SKILL_OPTIONS",
    "EnvOption",
    "apply_env",
    "blob_settings",
    "checked",
    "confirm_mode",
    "port",
    "positive_seconds",
    "protocol_line",
    "seconds",
    "server_url",
    "skill_settings",
]


def server_url(text: str) -> str:
    """An ``http(s)://`` or ``ws(s)://`` URL with a host; else ValueError with the fix."""
    parts = urlsplit(text)
    if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname:
        return text
    guess = text.split("://", 1)[-1] if "://" in text else text
    raise ValueError(f"not a Server URL: {text!r} (did you mean 'http://{guess}'?)")


def seconds(text: str) -> float:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{text!r} is not a number of seconds >= 0")
    return value


def positive_seconds(text: str) -> float:
    value = seconds(text)
    if value == 0:
        raise ValueError("must be more than 0 seconds")
    return value


def port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise ValueError(f"{value} is not a port (0-65535)")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError(f"{value} is not a positive number")
    return value


def confirm_mode(text: str) -> str:
    if text not in ("ask", "allow", "deny"):
        raise ValueError(f"{text!r} is not one of ask, allow, deny")
    return text


def switch(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{text!r} is not one of 1, true, yes, on, 0, false, no, off")


def protocol_line(text: str) -> str:
    if text not in KNOWN_LINES:
        raise ValueError(f"expected one of {', '.join(KNOWN_LINES)}")
    return text


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


@attrs.frozen
class EnvOption:
    """A ``run`` option that may come from the environment (the first set name wins)."""

    dest: str
    names: tuple[str, ...]
    convert: Callable[[str], Any] = str
    default: Any = None


ENV_OPTIONS: tuple[EnvOption, ...] = (
    EnvOption("config", ("A2C_COMPUTER_CONFIG",)),
    EnvOption("server", ("A2C_SERVER_URL",), server_url),
    EnvOption("office", ("A2C_OFFICE", "A2C_OFFICE_ID")),
    EnvOption("name", ("A2C_COMPUTER_NAME",)),
    EnvOption("token", ("A2C_TOKEN",)),
    EnvOption("token_file", ("A2C_TOKEN_FILE",)),
    EnvOption("allow_agent", ("A2C_ALLOW_AGENTS",), _names),
    EnvOption("socketio_path", ("A2C_SOCKETIO_PATH",), default="socket.io"),
    EnvOption("wait_server", ("A2C_WAIT_SERVER",), seconds, 30.0),
    EnvOption("confirm", ("A2C_CONFIRM",), confirm_mode, "ask"),
    EnvOption("metrics_port", ("A2C_METRICS_PORT",), port),
    EnvOption("metrics_host", ("A2C_METRICS_HOST",), default="127.0.0.1"),
    EnvOption("shutdown_grace", ("A2C_SHUTDOWN_GRACE",), seconds, 10.0),
    EnvOption("watch_config", ("A2C_WATCH_CONFIG",), switch, False),
    EnvOption("protocol", ("A2C_PROTOCOL",), protocol_line),
    EnvOption("input_timeout", ("A2C_INPUT_TIMEOUT",), positive_seconds, 300.0),
    EnvOption("max_input_requests_per_round", ("A2C_MAX_INPUT_REQUESTS_PER_ROUND",),
              positive_int, 16),
    EnvOption("max_input_requests_per_call", ("A2C_MAX_INPUT_REQUESTS_PER_CALL",),
              positive_int, 64),
)  # fmt: skip

#: Large-result settings: ``(flag, BlobSettings field, env var, convert, help)``; unset
#: ones keep the BlobSettings default.
BLOB_OPTIONS: tuple[tuple[str, str, str, Callable[[str], Any], str], ...] = (
    ("--max-message-bytes", "max_message_bytes", "A2C_COMPUTER_MAX_MESSAGE_BYTES", positive_int,
     "the Server's --max-message-bytes; no answer is larger (default 1000000)"),
    ("--blob-inline-budget", "inline_budget", "A2C_BLOB_INLINE_BUDGET", positive_int,
     "binary result items above this many bytes travel by blob handle (default 32768)"),
    ("--blob-chunk-bytes", "chunk_bytes", "A2C_BLOB_CHUNK_BYTES", positive_int,
     "largest client:get_blob chunk, raw bytes (default 262144)"),
    ("--blob-max-bytes", "max_blob_bytes", "A2C_BLOB_MAX_BYTES", positive_int,
     "absolute cap of one binary item (default 104857600)"),
    ("--blob-spool-dir", "spool_dir", "A2C_BLOB_SPOOL_DIR", str,
     "spool directory (default: a private directory under the user's cache)"),
    ("--blob-spool-max-bytes", "spool_max_bytes", "A2C_BLOB_SPOOL_MAX_BYTES", positive_int,
     "total spool size; the oldest items are evicted first (default 1073741824)"),
    ("--blob-ttl", "ttl", "A2C_BLOB_TTL", positive_seconds,
     "seconds a spooled result stays servable (default 3600)"),
)  # fmt: skip
ENV_OPTIONS += tuple(
    EnvOption(f"blob_{field}", (env,), convert) for _, field, env, convert, _ in BLOB_OPTIONS
)


#: Skill options (``run`` and ``skills``), filled from the environment like the others.
SKILL_OPTIONS: tuple[EnvOption, ...] = (
    EnvOption("skills_dir", ("A2C_SKILLS_DIR",)),
    EnvOption("skills_install_dir", ("A2C_SKILLS_INSTALL_DIR",)),
    EnvOption("no_user_skills", ("A2C_NO_USER_SKILLS",), switch, False),
)
ENV_OPTIONS += SKILL_OPTIONS
#: Upload options (``run`` and ``check``).
LANDING_ENV: tuple[EnvOption, ...] = tuple(
    EnvOption(f"landing_{field}", (env,), convert) for _, field, env, convert, _ in LANDING_OPTIONS
)
ENV_OPTIONS += LANDING_ENV


def skill_settings(args: argparse.Namespace, computer_name: str) -> SkillSettings:
    """The SkillSettings of parsed (and :func:`apply_env`-filled) arguments."""
    settings = default_skill_settings(computer_name)
    if args.skills_install_dir:
        install = Path(args.skills_install_dir).expanduser()
        settings = attrs.evolve(settings, install_dir=install, per_process=False)
    if args.no_user_skills:
        return attrs.evolve(settings, user_dir=None)
    if args.skills_dir:
        settings = attrs.evolve(settings, user_dir=Path(args.skills_dir).expanduser())
    return settings


def blob_settings(args: argparse.Namespace) -> BlobSettings:
    """The BlobSettings of the parsed (and :func:`apply_env`-filled) ``run`` arguments."""
    given = {
        field: getattr(args, f"blob_{field}")
        for _, field, *_ in BLOB_OPTIONS
        if getattr(args, f"blob_{field}", None) is not None
    }
    try:
        return BlobSettings(**given)
    except ValueError as exc:
        raise ConfigError(f"invalid large-result setting: {exc}") from exc


def apply_env(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    environ: Mapping[str, str] | None = None,
    options: tuple[EnvOption, ...] = ENV_OPTIONS,
) -> None:
    """Fill every option left unset by a flag from its variable, else its default
    (``options``: all those of ``run`` unless told)."""
    env = os.environ if environ is None else environ
    for option in options:
        if getattr(args, option.dest, None) is not None:
            continue
        value = option.default
        for name in option.names:
            if (raw := env.get(name)) is not None and not raw.strip():  # as the other CLIs
                parser.error(f"{name} is set but empty: unset it or give a value")
            if raw:
                try:
                    value = option.convert(raw)
                except ValueError as exc:
                    parser.error(f"environment variable {name}={raw!r}: {_reason(exc)}")
                break
        setattr(args, option.dest, value)


def _reason(exc: ValueError) -> str:
    text = str(exc)
    return "not a number" if text.startswith(("could not convert", "invalid literal")) else text


def checked(convert: Callable[[str], Any], what: str) -> Callable[[str], Any]:
    """``convert`` as an argparse ``type``: its ValueError becomes a usage error."""

    def check(text: str) -> Any:
        try:
            return convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: {_reason(exc)}") from exc

    check.__name__ = what
    return check
