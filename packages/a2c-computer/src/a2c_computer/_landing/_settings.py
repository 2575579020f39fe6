"""Where uploads land and how much may land (``--landing-dir`` and its limits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

__all__ = ["LandingSettings"]

_MIB = 1024 * 1024


def _positive(_: Any, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and (isinstance(value, bool) or value <= 0):
        raise ValueError(f"{attribute.name} must be positive, got {value!r}")


@attrs.frozen(kw_only=True)
class LandingSettings:
    """How a Computer takes ``client:put_blob`` uploads (every field has a flag and env var).

    * ``landing_dir``: the only directory uploads are written to. None (the default)
      refuses every upload with 4019 ``forbidden``: an operator opts in. It must exist and
      be writable when the Computer starts (it is never created: a typo must not make a
      new directory that nothing reads).
    * ``max_upload_bytes``: the largest one upload may declare (default 100 MiB); larger
      declarations are refused before any byte is written.
    * ``max_total_bytes``: what the entries of the directory plus the uploads in progress
      may take **on disk** (allocated blocks: a 1-byte file takes a whole block, 4 KiB on
      most file systems), default 1 GiB.
    * ``max_files``: how many entries the directory may hold, uploads in progress included
      (default 10,000): every file costs an inode whatever its size.
    * ``agent_max_bytes`` / ``agent_max_files``: the same two limits for what one Agent
      landed (None, the default: only the totals apply).
    * ``retention``: seconds a landed file is kept; older regular files are removed by the
      Computer (checked every minute). None (the default) keeps them until someone deletes
      them (``a2c-computer landed clean``).
    * ``idle_timeout``: seconds an upload may wait for its next chunk before it is dropped
      with its partial file (default 300).
    * ``max_concurrent``: uploads in progress at once (default 4); more are ``busy``.
    """

    landing_dir: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))
    max_upload_bytes: int = attrs.field(default=100 * _MIB, validator=_positive)
    max_total_bytes: int = attrs.field(default=1024 * _MIB, validator=_positive)
    max_files: int = attrs.field(default=10_000, validator=_positive)
    agent_max_bytes: int | None = attrs.field(default=None, validator=_positive)
    agent_max_files: int | None = attrs.field(default=None, validator=_positive)
    retention: float | None = attrs.field(default=None, validator=_positive)
    idle_timeout: float = attrs.field(default=300.0, validator=_positive)
    max_concurrent: int = attrs.field(default=4, validator=_positive)
