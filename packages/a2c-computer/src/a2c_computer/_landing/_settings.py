"""Where uploads land and how much may land (``--landing-dir`` and its limits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

__all__ = ["LandingSettings"]

_MIB = 1024 * 1024


def _positive(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if isinstance(value, bool) or value <= 0:
        raise ValueError(f"{attribute.name} must be positive, got {value!r}")


@attrs.frozen(kw_only=True)
class LandingSettings:
    """How a Computer takes ``client:put_blob`` uploads (every field has a flag and env var).

    * ``landing_dir``: the only directory uploads are written to. None (the default)
      refuses every upload with 4019 ``forbidden``: an operator opts in.
    * ``max_upload_bytes``: the largest one upload may declare (default 100 MiB); larger
      declarations are refused before any byte is written.
    * ``max_total_bytes``: what the files in the directory plus the uploads in progress may
      add up to (default 1 GiB).
    * ``idle_timeout``: seconds an upload may wait for its next chunk before it is dropped
      with its partial file (default 300).
    * ``max_concurrent``: uploads in progress at once (default 4); more are ``busy``.
    """

    landing_dir: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))
    max_upload_bytes: int = attrs.field(default=100 * _MIB, validator=_positive)
    max_total_bytes: int = attrs.field(default=1024 * _MIB, validator=_positive)
    idle_timeout: float = attrs.field(default=300.0, validator=_positive)
    max_concurrent: int = attrs.field(default=4, validator=_positive)
