"""The converters, and decoding / encoding with them.

Two converters share the same hooks and differ in one rule:

* **peer** (:func:`from_wire`): unknown keys are ignored, because other 0.2.x peers may
  add optional fields;
* **config** (:func:`a2c_protocol.config_from_json`): unknown keys are errors, because in
  a hand-written file they are typos.

Scalars are strict in both (``3`` is not a string, ``true`` is not an int); floats accept
JSON integers. A failure raises one :class:`InvalidPayloadError` listing every field error
with its JSON path.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

import attrs
from cattrs import Converter
from cattrs.errors import ClassValidationError, IterableValidationError

from a2c_protocol._exceptions import FieldError, InvalidPayloadError
from a2c_protocol._models import (
    AttributeValue,
    CommandInput,
    MCPServerConfig,
    MCPServerInput,
    PickStringInput,
    PromptStringInput,
    Role,
    SseServerConfig,
    StdioServerConfig,
    StreamableServerConfig,
)

from ._hooks import (
    _attrs_structure,
    _attrs_unstructure,
    _identity,
    _is_dict_type,
    _is_enum_type,
    _is_list_type,
    _is_opaque_json,
    _strict_container,
    _structure_any,
    _structure_attribute,
    _structure_bool,
    _structure_enum,
    _structure_float,
    _structure_int,
    _structure_str,
    _tagged_union,
    _TypeMismatch,
)
from ._report import _collect

T = TypeVar("T")

_SERVER_TAGS: Final[dict[str, type[Any]]] = {
    "stdio": StdioServerConfig,
    "streamable": StreamableServerConfig,
    "sse": SseServerConfig,
}
# Another implementation spells Streamable HTTP "http"; accept it, always emit "streamable".
_SERVER_TAG_ALIASES: Final = {"http": "streamable", "HTTP": "streamable"}
_INPUT_TAGS: Final[dict[str, type[Any]]] = {
    "promptString": PromptStringInput,
    "pickString": PickStringInput,
    "command": CommandInput,
}


def _make_converter(*, forbid_extra: bool, detailed: bool = True) -> Converter:
    conv = Converter(detailed_validation=detailed)
    conv.register_structure_hook(str, _structure_str)
    conv.register_structure_hook(int, _structure_int)
    conv.register_structure_hook(float, _structure_float)
    conv.register_structure_hook(bool, _structure_bool)
    conv.register_structure_hook(Any, _structure_any)
    conv.register_structure_hook_func(_is_enum_type, _structure_enum)
    # singledispatch would pick the str hook for a StrEnum, so name each enum explicitly.
    conv.register_structure_hook(Role, _structure_enum)
    conv.register_unstructure_hook(Role, lambda role: role.value)
    conv.register_structure_hook(AttributeValue, _structure_attribute)
    conv.register_structure_hook_factory(
        _is_dict_type, lambda tp: _strict_container(conv, tp, dict, "object")
    )
    conv.register_structure_hook_factory(
        _is_list_type, lambda tp: _strict_container(conv, tp, list, "array")
    )
    conv.register_unstructure_hook_factory(attrs.has, _attrs_unstructure(conv))
    # Encoding opaque JSON value by value is the dominant cost for tool lists; it is
    # already JSON, so it goes out as is.
    conv.register_unstructure_hook_func(_is_opaque_json, _identity)
    conv.register_structure_hook_factory(attrs.has, _attrs_structure(conv, forbid_extra, detailed))
    for union, tags, aliases in (
        (MCPServerConfig, _SERVER_TAGS, _SERVER_TAG_ALIASES),
        (MCPServerInput, _INPUT_TAGS, {}),
    ):
        structure, unstructure = _tagged_union(conv, tags, aliases)
        conv.register_structure_hook(union, structure)
        conv.register_unstructure_hook(union, unstructure)
        for cls in tags.values():
            # A member unstructured on its own (as ``servers`` values are) keeps its tag.
            conv.register_unstructure_hook(cls, unstructure)
    return conv


# Decoding runs on the fast converter; only when it fails is the payload decoded again by
# the detailed one, whose job is to collect every field error for the report.
_PEER_FAST: Final = _make_converter(forbid_extra=False, detailed=False)
_PEER: Final = _make_converter(forbid_extra=False)
_CONFIG: Final = _make_converter(forbid_extra=True)


def _structure(
    conv: Converter, cls: type[T], data: object, label: str, fast: Converter | None = None
) -> T:
    if fast is not None:
        try:
            return fast.structure(data, cls)
        except Exception:
            pass  # any failure is re-diagnosed in detail below
    try:
        return conv.structure(data, cls)
    except (
        ClassValidationError,
        IterableValidationError,
        _TypeMismatch,
        ValueError,
        TypeError,
        KeyError,
    ) as exc:
        errors: list[FieldError] = []
        _collect(exc, "$", errors)
        raise InvalidPayloadError(label, errors) from exc


def _label(cls: Any) -> str:
    return getattr(cls, "__name__", None) or str(cls)


# ------------------------------------------------------------------ public API


def to_wire(obj: Any) -> Any:
    """Unstructure a model (or a list / dict of models) into JSON-ready data."""
    return _PEER.unstructure(obj)


def from_wire(cls: type[T], data: object) -> T:
    """Decode a peer message into ``cls``; unknown keys are ignored.

    Raises :class:`InvalidPayloadError` listing every field error.
    """
    return _structure(_PEER, cls, data, _label(cls), _PEER_FAST)
