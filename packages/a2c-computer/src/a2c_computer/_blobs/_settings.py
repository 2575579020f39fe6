"""Sizes and lifetimes of the Computer's blob channel (spec §5.5, §5.10, §17 A6/A8)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import attrs

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "BlobSettings", "default_cache_root"]

#: The Server's default ``--max-message-bytes``; the two must agree (raise both together).
DEFAULT_MAX_MESSAGE_BYTES = 1_000_000
_KIB = 1024
_MIB = 1024 * 1024


def _positive(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if isinstance(value, bool) or value <= 0:
        raise ValueError(f"{attribute.name} must be positive, got {value!r}")


def _message_limit(_: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    # Below this not even one useful chunk plus its envelope fits into an answer.
    if value < 64 * _KIB:
        raise ValueError(f"{attribute.name} must be at least 65536 bytes, got {value!r}")


def default_cache_root() -> Path:
    """The user's cache directory (XDG on Linux, Library/Caches on macOS, LOCALAPPDATA)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base) if base else Path.home() / "AppData" / "Local"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    base = os.environ.get("XDG_CACHE_HOME")
    return Path(base) if base else Path.home() / ".cache"


@attrs.frozen(kw_only=True)
class BlobSettings:
    """How a Computer moves large binary results (every field has a CLI flag and env var).

    * ``inline_budget``: binary tool-result items up to this many decoded bytes stay inline;
      larger ones travel by handle (default 32 KiB).
    * ``chunk_bytes``: the largest chunk ``client:get_blob`` serves, in raw bytes before
      base64 (default 256 KiB; further clamped so one answer fits ``max_message_bytes``).
    * ``max_blob_bytes``: the absolute cap of one item (default 100 MiB); a larger binary
      item makes the tool result an ``isError`` result that states the size.
    * ``spool_dir``: where spooled items live (default: a private 0700 directory per
      Computer name under the user's cache directory).
    * ``spool_max_bytes``: total size of the spool (default 1 GiB); the oldest items are
      evicted first to make room.
    * ``ttl``: how long (seconds) a spooled item stays servable after it was last minted
      (default one hour); expired items are removed on start and by a periodic sweep.
    * ``sweep_interval``: seconds between sweeps (default ``min(ttl / 2, 300)``).
    * ``max_message_bytes``: the Server's message limit (default 1 000 000, the Server's
      default). No answer the Computer sends is larger than this.
    """

    inline_budget: int = attrs.field(default=32 * _KIB, validator=_positive)
    chunk_bytes: int = attrs.field(default=256 * _KIB, validator=_positive)
    max_blob_bytes: int = attrs.field(default=100 * _MIB, validator=_positive)
    spool_dir: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))
    spool_max_bytes: int = attrs.field(default=1024 * _MIB, validator=_positive)
    ttl: float = attrs.field(default=3600.0, validator=_positive)
    sweep_interval: float | None = attrs.field(
        default=None, validator=attrs.validators.optional(_positive)
    )
    max_message_bytes: int = attrs.field(
        default=DEFAULT_MAX_MESSAGE_BYTES, validator=_message_limit
    )

    @property
    def effective_sweep_interval(self) -> float:
        return self.sweep_interval if self.sweep_interval is not None else min(self.ttl / 2, 300.0)
