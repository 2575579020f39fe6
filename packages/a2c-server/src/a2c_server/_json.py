"""The JSON codec the Server hands python-socketio: orjson where it writes the same bytes.

python-socketio encodes every packet it sends with ``json.dumps(data, separators=(",",
":"))``. orjson does that one to two orders of magnitude faster, but not always to the
same text: it writes non-ASCII characters and DEL (0x7f) raw (the standard library
escapes them),
small negative exponents differently (``2.5e-7`` for ``2.5e-07``, ``0.00001`` for
``1e-05``), ``NaN``/``Infinity`` as ``null``, and it refuses integers beyond 64 bits.

Peers must see exactly what the standard library would have sent, so :func:`dumps` keeps
orjson's output only when none of those cases can be in it — pure ASCII, and none of the
byte patterns ``e-``, ``0.0000``, ``null`` and DEL (each a substring test at C speed; a false
alarm only costs the slower path) — and otherwise encodes again with the standard
library. Decoding stays with the standard library: measured, orjson is no faster at the
sizes the Server sees once the same guards are paid, and it silently turns integers
beyond 64 bits into floats.

Without orjson installed, this module is the standard library.
"""

from __future__ import annotations

import json
from typing import Any, Final

try:
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson has no wheel
    orjson = None  # type: ignore[assignment]

__all__ = ["COMPACT", "FAST", "compact", "dumps", "loads"]

#: True when orjson is in use for encoding.
FAST = orjson is not None

#: The separators python-socketio encodes its packets with (the only ones orjson serves).
COMPACT: Final = (",", ":")

loads = json.loads


def compact(obj: Any) -> str | None:
    """``json.dumps(obj, separators=(",", ":"))`` when orjson writes it; None otherwise.

    None means orjson cannot encode ``obj`` (bytes, integers beyond 64 bits, non-string
    keys, unknown types) or its text might differ from the standard library's.
    """
    if not FAST:
        return None
    try:
        out = orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        return None
    # Spelled out rather than any(...): a generator per packet shows in profiles.
    if (
        out.isascii()
        and b"e-" not in out
        and b"0.0000" not in out
        and b"null" not in out
        and b"\x7f" not in out
    ):
        return out.decode("ascii")
    return None


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps(obj, **kwargs)``, byte for byte; faster for compact packets."""
    if kwargs.get("separators") == COMPACT and len(kwargs) == 1:
        text = compact(obj)
        if text is not None:
            return text
    return json.dumps(obj, **kwargs)
