"""The JSON aliases and field helpers every wire-model module shares.

Field metadata carries the two facts the converter (:mod:`a2c_protocol._wire`) needs:

* ``wire``: the JSON key when it differs from the attribute (``_meta``, ``isError``...);
* ``omit``: an optional field that is left out of the JSON when it is ``None``, so
  optional fields absent on input stay absent on output.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

__all__ = ["AttributeValue", "Attributes", "JsonObject"]

JsonObject: TypeAlias = dict[str, Any]
AttributeValue: TypeAlias = str | int | float | bool | list[str] | None
Attributes: TypeAlias = dict[str, AttributeValue]


def _opt(**kwargs: Any) -> Any:
    """An optional field: defaults to None and is omitted from the JSON when None."""
    metadata = {"omit": True, **kwargs.pop("metadata", {})}
    return attrs.field(default=None, metadata=metadata, **kwargs)


def _wire(name: str, **kwargs: Any) -> Any:
    metadata = {"wire": name, **kwargs.pop("metadata", {})}
    return attrs.field(metadata=metadata, **kwargs)
