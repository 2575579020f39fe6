"""The converter's hooks: strict scalars and containers, attrs classes in their wire
spelling (renames, omitted ``None``, accepted input aliases) and tagged unions.

What JSON a model is, field by field; :mod:`._converter` assembles the converters from it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, Final, get_args, get_origin

import attrs
from cattrs import Converter
from cattrs.cols import list_structure_factory, mapping_structure_factory
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from a2c_protocol._models import A2CResource, AttributeValue, CallToolResult

# Input spellings accepted on the way in (MCP JSON vs the protocol's snake_case).
_INPUT_ALIASES: Final[dict[type[Any], dict[str, str]]] = {
    CallToolResult: {"_meta": "meta"},
    A2CResource: {"mime_type": "mimeType"},
}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class _TypeMismatch(TypeError):
    pass


def _structure_str(value: object, _: type) -> str:
    if isinstance(value, str):
        return value
    raise _TypeMismatch(f"expected string, got {_json_type(value)}")


def _structure_int(value: object, _: type) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _TypeMismatch(f"expected int, got {_json_type(value)}")


def _structure_float(value: object, _: type) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        result = float(value)
        if math.isfinite(result):
            return result
        raise _TypeMismatch("expected a finite number")
    raise _TypeMismatch(f"expected number, got {_json_type(value)}")


def _structure_bool(value: object, _: type) -> bool:
    if isinstance(value, bool):
        return value
    raise _TypeMismatch(f"expected boolean, got {_json_type(value)}")


def _structure_any(value: object, _: type) -> object:
    return value


def _structure_attribute(value: object, _: type) -> object:
    # Attributes hold simple values only; complex ones must arrive JSON-stringified.
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise _TypeMismatch(
        f"expected a string, number, boolean, null or list of strings, got {_json_type(value)}"
    )


def _is_enum_type(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, Enum)


def _structure_enum(value: object, tp: type[Enum]) -> Enum:
    # Checked before the str hook would turn a StrEnum into a plain (unchecked) string.
    try:
        return tp(value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in tp)
        raise _TypeMismatch(f"expected one of {allowed}, got {value!r}") from None


def _is_dict_type(tp: Any) -> bool:
    return tp is dict or get_origin(tp) is dict


def _is_list_type(tp: Any) -> bool:
    return tp is list or get_origin(tp) is list


def _strict_container(
    conv: Converter, tp: Any, kind: type, label: str
) -> Callable[[object, type], Any]:
    args = get_args(tp)
    inner: Callable[[Any, Any], Any] | None
    if kind is dict:
        inner = mapping_structure_factory(tp, conv) if args and args[1] is not Any else None
    else:
        inner = list_structure_factory(tp, conv) if args and args[0] is not Any else None

    def hook(value: object, _: type) -> Any:
        if not isinstance(value, kind):
            raise _TypeMismatch(f"expected {label}, got {_json_type(value)}")
        if inner is None:
            # Opaque JSON (dict[str, Any] / list[Any]) is passed through uncopied: it is
            # the hot path for tool params and results.
            return value
        return inner(value, tp)  # type: ignore[arg-type]

    return hook


_OPAQUE_LEAVES: Final = (Any, str, AttributeValue)


def _is_opaque_json(tp: Any) -> bool:
    """JSON containers whose leaves need no conversion (schemas, params, content blocks)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is dict:
        return args[1] in _OPAQUE_LEAVES or _is_opaque_json(args[1])
    if origin is list:
        return args[0] in _OPAQUE_LEAVES or _is_opaque_json(args[0])
    return False


def _identity(value: Any) -> Any:
    return value


def _attrs_unstructure(conv: Converter) -> Callable[[type], Callable[[Any], dict[str, Any]]]:
    def factory(cls: type) -> Callable[[Any], dict[str, Any]]:
        overrides: dict[str, Any] = {}
        for field in attrs.fields(cls):
            wire = field.metadata.get("wire")
            omit = bool(field.metadata.get("omit"))
            if wire or omit:
                overrides[field.name] = override(rename=wire, omit_if_default=omit or None)
        return make_dict_unstructure_fn(cls, conv, **overrides)

    return factory


def _attrs_structure(
    conv: Converter, forbid_extra: bool, detailed: bool
) -> Callable[[type], Callable[[Any, type], Any]]:
    def factory(cls: type) -> Callable[[Any, type], Any]:
        overrides: dict[str, Any] = {
            f.name: override(rename=f.metadata["wire"])
            for f in attrs.fields(cls)
            if f.metadata.get("wire")
        }
        inner: Callable[[Any, Any], Any] = make_dict_structure_fn(
            cls,
            conv,
            _cattrs_forbid_extra_keys=forbid_extra,
            _cattrs_detailed_validation=detailed,
            **overrides,
        )
        aliases = _INPUT_ALIASES.get(cls, {})

        def hook(value: Any, _: type) -> Any:
            if not isinstance(value, Mapping):
                raise _TypeMismatch(f"expected object, got {_json_type(value)}")
            if aliases and any(k in value for k in aliases):
                value = dict(value)
                for alias, canonical in aliases.items():
                    if alias in value:
                        aliased = value.pop(alias)
                        current = value.get(canonical)
                        if isinstance(current, Mapping) and isinstance(aliased, Mapping):
                            # Both spellings of a meta object: keep every key, the
                            # canonical spelling winning (0.2.3 placement rule).
                            value[canonical] = {**aliased, **current}
                        else:
                            value.setdefault(canonical, aliased)
            return inner(value, cls)

        return hook

    return factory


def _tagged_union(
    conv: Converter, tags: Mapping[str, type[Any]], aliases: Mapping[str, str]
) -> tuple[Callable[[Any, type], Any], Callable[[Any], dict[str, Any]]]:
    tag_of = {cls: tag for tag, cls in tags.items()}
    body_of = {cls: _attrs_unstructure(conv)(cls) for cls in tags.values()}

    def structure(value: Any, _: type) -> Any:
        if not isinstance(value, Mapping):
            raise _TypeMismatch(f"expected object, got {_json_type(value)}")
        tag = value.get("type")
        tag = aliases.get(tag, tag) if isinstance(tag, str) else tag
        cls = tags.get(tag) if isinstance(tag, str) else None
        if cls is None:
            allowed = ", ".join(repr(t) for t in tags)
            raise _TypeMismatch(f"'type' must be one of {allowed}, got {value.get('type')!r}")
        body = {k: v for k, v in value.items() if k != "type"}
        return conv.structure(body, cls)

    def unstructure(obj: Any) -> dict[str, Any]:
        body = body_of[type(obj)](obj)
        # The tag goes right after the identifying first key (name / id) so it reads naturally.
        items = iter(body.items())
        out: dict[str, Any] = dict([next(items)])
        out["type"] = tag_of[type(obj)]
        out.update(items)
        return out

    return structure, unstructure
