"""Can these tool arguments be sent at all? (pure)

Rules:

* JSON text that decodes to a lone surrogate (``"\\udcff"``) is valid JSON but no encoder
  of the MCP transports accepts it; such a value must be refused for its own call, before
  it reaches an MCP session (where a failed write tears the session down for every call);
* the refusal names the first offending field as a path (``items[2].name``), keys included.
"""

from __future__ import annotations

from typing import Any

__all__ = ["unencodable_field"]


def _first_bad(text: str) -> int | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def unencodable_field(value: Any, path: str = "") -> str | None:
    """A description of the first string in ``value`` that is not valid Unicode, or None."""
    if isinstance(value, str):
        at = _first_bad(value)
        if at is None:
            return None
        return (
            f"argument {path or '(root)'} contains {value[at]!r} at position {at}, "
            "which cannot be encoded (a lone surrogate)"
        )
    if isinstance(value, dict):
        for key, item in value.items():
            name = str(key)
            at = _first_bad(name)
            if at is not None:
                return (
                    f"an argument name under {path or '(root)'} contains {name[at]!r}, "
                    "which cannot be encoded (a lone surrogate)"
                )
            found = unencodable_field(item, f"{path}.{name}" if path else name)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = unencodable_field(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None
