"""The routing fields of a ``client:*`` request, checked without building its model.

A relayed request needs four fields (agent, computer, req_id and, for a tool call, the
timeout); the Computer reads the rest itself. Building the full attrs model with cattrs
for that was the largest single step of the relay's own work per call, so
:func:`route_reader` derives, per request model, a check of exactly the plain shape the
model accepts: every required field present with its JSON type (``str``, ``int`` but not
``bool``, an object), no optional field present. A payload of that shape is one the model
accepts as is (peer decoding ignores unknown keys), so the check cannot let through what
the model would refuse.

Anything else (an optional or extension field, a wrong type, a missing field) returns None,
and the caller decodes the full model as before: it accepts what is valid and answers what
is not with the same flat 400 ErrorPayload naming the field. A model with a field of any
other kind (an enum, a nested model) gets a reader that always says None.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, Final

import attrs

__all__ = ["RouteReader", "route_reader"]

#: ``data`` back when it has the plain shape of the model, else None.
RouteReader = Callable[[Any], dict[str, Any] | None]

_PLAIN: Final[dict[Any, type]] = {str: str, int: int, bool: bool}


def _plain_kind(tp: Any) -> type | None:
    if tp in _PLAIN:
        return _PLAIN[tp]
    if typing.get_origin(tp) is dict and typing.get_args(tp)[:1] in ((str,), ()):
        value = typing.get_args(tp)[1:]
        if value in ((Any,), ()):  # opaque JSON object: no check below the top level
            return dict
    return None


def _never(data: Any) -> None:
    return None


def route_reader(model: type) -> RouteReader:
    """The plain-shape check of ``model`` (an attrs request model of ``client:*``)."""
    hints = typing.get_type_hints(model)
    required: list[tuple[str, type]] = []
    optional: list[str] = []
    for field in attrs.fields(model):
        if "wire" in field.metadata:  # spelled differently on the wire: not worth a case
            return _never
        if field.default is not attrs.NOTHING:
            optional.append(field.name)
            continue
        kind = _plain_kind(hints[field.name])
        if kind is None:
            return _never
        required.append((field.name, kind))
    needed, absent = tuple(required), tuple(optional)

    def read(data: Any) -> dict[str, Any] | None:
        if type(data) is not dict:
            return None
        # type() is, not isinstance: bool is an int to isinstance, and the model refuses it.
        for name, kind in needed:
            if type(data.get(name)) is not kind:
                return None
        for name in absent:
            if name in data:
                return None
        return data

    return read
