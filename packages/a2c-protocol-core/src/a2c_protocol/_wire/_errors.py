"""Recognising and decoding flat ErrorPayloads in acks, and their typed exceptions."""

from __future__ import annotations

from typing import Any, Final

from a2c_protocol._codes import ErrorCode
from a2c_protocol._exceptions import (
    AnyErrorPayload,
    InvalidPayloadError,
    RemoteError,
    error_from_payload,
)
from a2c_protocol._models import (
    CapabilityNotSupportedPayload,
    ErrorPayload,
    McpServerNotFoundPayload,
    VersionMismatchPayload,
)

from ._converter import from_wire


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
