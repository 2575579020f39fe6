"""The one place that knows the JSON spelling of every model.

Two converters share the same hooks and differ in one rule:

* **peer** (:func:`from_wire`): unknown keys are ignored, because other 0.2.x peers may
  add optional fields;
* **config** (:func:`config_from_json`): unknown keys are errors, because in a
  hand-written file they are typos.

Scalars are strict in both (``3`` is not a string, ``true`` is not an int); floats accept
JSON integers. A failure raises one :class:`InvalidPayloadError` listing every field error
with its JSON path.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, Final, TypeVar, get_args, get_origin

import attrs
from cattrs import Converter
from cattrs.cols import list_structure_factory, mapping_structure_factory
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from ._codes import ErrorCode
from ._exceptions import (
    AnyErrorPayload,
    FieldError,
    InvalidPayloadError,
    RemoteError,
    error_from_payload,
)
from ._models import (
    A2CResource,
    AttributeValue,
    CallToolResult,
    CapabilityNotSupportedPayload,
    CommandInput,
    ErrorPayload,
    GetComputerConfigRet,
    MCPServerConfig,
    MCPServerInput,
    McpServerNotFoundPayload,
    PickStringInput,
    PromptStringInput,
    Role,
    SMCPTool,
    SseServerConfig,
    StdioServerConfig,
    StreamableServerConfig,
    ToolMeta,
    VersionMismatchPayload,
)

__all__ = [
    "A2C_TOOL_META_KEY",
    "MCP_TOOL_ANNOTATION_KEY",
    "config_from_json",
    "decode_tool_meta",
    "encode_tool_meta",
    "error_payload_from_wire",
    "from_wire",
    "is_error_payload",
    "parse_iso8601_duration",
    "remote_error_of",
    "to_wire",
    "tool_meta_of",
    "with_tool_meta",
]

T = TypeVar("T")

#: ``SMCPTool.meta`` key holding the merged ToolMeta as a JSON string.
A2C_TOOL_META_KEY: Final = "a2c_tool_meta"
#: ``SMCPTool.meta`` key holding MCP's tool annotations as a JSON string.
MCP_TOOL_ANNOTATION_KEY: Final = "MCP_TOOL_ANNOTATION"

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


# ------------------------------------------------------------- error formatting


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ForbiddenExtraKeysError):
        keys = ", ".join(sorted(exc.extra_fields))
        return f"unknown key(s): {keys}"
    if isinstance(exc, KeyError):
        return "required field is missing"
    if isinstance(exc, _TypeMismatch):
        return str(exc)
    if isinstance(exc, ValueError) and "not a valid" in str(exc):
        return str(exc)
    return str(exc) or type(exc).__name__


def _collect(exc: BaseException, path: str, out: list[FieldError]) -> None:
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            note = _note_of(sub)
            if note is None:
                _collect(sub, path, out)
            else:
                _collect(sub, f"{path}{note}", out)
        return
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            out.append(FieldError(f"{path}.{key}", "unknown key"))
        return
    out.append(FieldError(path, _describe(exc)))


def _note_of(exc: BaseException) -> str | None:
    for note in getattr(exc, "__notes__", ()):
        name = getattr(note, "name", None)
        if name is not None:
            return f".{name}"
        index = getattr(note, "index", None)
        if index is not None:
            return f"[{index!r}]" if not isinstance(index, int) else f"[{index}]"
    return None


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


def config_from_json(data: object) -> GetComputerConfigRet:
    """Decode a Computer configuration document strictly (unknown keys are errors).

    Also enforces that every server's ``name`` equals its key in ``servers``, that each
    ``${input:...}``-free ISO 8601 duration parses, and that input ids are unique.
    """
    config = _structure(_CONFIG, GetComputerConfigRet, data, "computer config")
    errors: list[FieldError] = []
    for key, server in config.servers.items():
        at = f"$.servers[{key!r}]"
        if server.name != key:
            errors.append(
                FieldError(f"{at}.name", f"must equal its key {key!r}, got {server.name!r}")
            )
        if isinstance(server, StreamableServerConfig):
            for attr in ("timeout", "sse_read_timeout"):
                value = getattr(server.server_parameters, attr)
                if "${input:" in value:
                    continue  # resolved on the Computer at start-up, checked then
                try:
                    parse_iso8601_duration(value)
                except ValueError as exc:
                    errors.append(FieldError(f"{at}.server_parameters.{attr}", str(exc)))
        default = server.default_tool_meta
        if default is not None and default.alias is not None:
            errors.append(
                FieldError(
                    f"{at}.default_tool_meta.alias",
                    "an alias in default_tool_meta would give every tool the same name",
                )
            )
    seen: set[str] = set()
    for index, item in enumerate(config.inputs or []):
        if item.id in seen:
            errors.append(FieldError(f"$.inputs[{index}].id", f"duplicate input id {item.id!r}"))
        seen.add(item.id)
        if (
            isinstance(item, PickStringInput)
            and item.default is not None
            and item.default not in item.options
        ):
            errors.append(
                FieldError(f"$.inputs[{index}].default", "default must be one of options")
            )
    if errors:
        raise InvalidPayloadError("computer config", errors)
    return config


def is_error_payload(data: object) -> bool:
    """Whether an ack payload is a flat ErrorPayload (top-level int ``code`` + str ``message``)."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("code"), int)
        and not isinstance(data.get("code"), bool)
        and isinstance(data.get("message"), str)
    )


_PAYLOAD_BY_CODE: Final[dict[int, type[Any]]] = {
    ErrorCode.PROTOCOL_VERSION_MISMATCH: VersionMismatchPayload,
    ErrorCode.MCP_SERVER_NOT_FOUND: McpServerNotFoundPayload,
    ErrorCode.MCP_CAPABILITY_NOT_SUPPORTED: CapabilityNotSupportedPayload,
}


def error_payload_from_wire(data: object) -> AnyErrorPayload:
    """Decode a flat ErrorPayload, dispatching on ``code`` to its typed variant.

    A 4008/4014/4015 payload that lacks its required fields degrades to the generic
    :class:`ErrorPayload` rather than failing: the code and message are still useful.
    """
    generic = from_wire(ErrorPayload, data)
    variant = _PAYLOAD_BY_CODE.get(generic.code)
    if variant is None:
        return generic
    try:
        result: AnyErrorPayload = from_wire(variant, data)
    except InvalidPayloadError:
        return generic
    return result


def remote_error_of(data: object) -> RemoteError | None:
    """The typed exception for a payload that is a flat ErrorPayload, else None.

    An ack or refusal that merely looks like one (``code`` and ``message``) but does not
    decode gives None, so callers fall through to their ordinary handling.
    """
    if not is_error_payload(data):
        return None
    try:
        return error_from_payload(error_payload_from_wire(data))
    except InvalidPayloadError:
        return None


# ----------------------------------------------------------------- tool meta


def encode_tool_meta(meta: ToolMeta) -> str:
    """The JSON string stored in ``SMCPTool.meta["a2c_tool_meta"]`` (all four keys)."""
    return json.dumps(to_wire(meta), ensure_ascii=False, separators=(", ", ": "))


def decode_tool_meta(text: str) -> ToolMeta:
    """Parse an ``a2c_tool_meta`` string; unknown keys are ignored (other SDKs add some)."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise InvalidPayloadError("ToolMeta", [FieldError("$", f"not JSON: {exc}")]) from exc
    return from_wire(ToolMeta, data)


def tool_meta_of(tool: SMCPTool) -> ToolMeta | None:
    """The parsed ToolMeta of a tool, or None when it has no ``a2c_tool_meta``."""
    raw = (tool.meta or {}).get(A2C_TOOL_META_KEY)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidPayloadError(
            "SMCPTool", [FieldError(f"$.meta.{A2C_TOOL_META_KEY}", "must be a JSON string")]
        )
    return decode_tool_meta(raw)


def with_tool_meta(tool: SMCPTool, meta: ToolMeta | None) -> SMCPTool:
    """A copy of ``tool`` whose ``a2c_tool_meta`` is ``meta`` (removed when None)."""
    attributes = dict(tool.meta or {})
    if meta is None:
        attributes.pop(A2C_TOOL_META_KEY, None)
    else:
        attributes[A2C_TOOL_META_KEY] = encode_tool_meta(meta)
    return attrs.evolve(tool, meta=attributes)


# ----------------------------------------------------------------- durations

_DURATION_RE: Final = re.compile(
    r"P(?!$)(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?=\d)(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?",
    re.ASCII,
)


def parse_iso8601_duration(text: str) -> float:
    """Seconds in an ISO 8601 duration such as ``PT30S``, ``PT5M`` or ``P1DT2H``.

    Years, months and weeks are refused: their length in seconds is not fixed.
    """
    match = _DURATION_RE.fullmatch(text) if isinstance(text, str) else None
    if match is None or text.endswith("T"):
        raise ValueError(f"{text!r} is not an ISO 8601 duration like 'PT30S' or 'PT5M'")
    parts = {k: float(v) for k, v in match.groupdict().items() if v is not None}
    return (
        parts.get("d", 0.0) * 86400
        + parts.get("h", 0.0) * 3600
        + parts.get("m", 0.0) * 60
        + parts.get("s", 0.0)
    )
