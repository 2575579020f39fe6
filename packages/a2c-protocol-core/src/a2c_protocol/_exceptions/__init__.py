"""The exception tree of ``a2c_protocol``; every error the core raises is an ``A2CError``.

::

    A2CError
    ├── InvalidPayloadError           a payload failed validation (carries every field error)
    ├── InvalidWindowURIError         a string is not a valid window:// URI
    ├── InvalidPriorityError          a priority is outside the allowed range or type
    ├── RemoteError                   a flat ErrorPayload received from a peer
    │   ├── BadRequestError (400)  UnauthorizedError (401)  ForbiddenError (403)
    │   ├── NotFoundError (404)  RequestTimeoutError (408)  InternalError (500)
    │   ├── ProtocolVersionError (4008, or WebSocket close 4900)
    │   ├── McpServerNotFoundError (4014)
    │   │   └── SkillNotFoundError (4014 with details.name: an unknown skill)
    │   ├── CapabilityNotSupportedError (4015)
    │   ├── InvalidSkillNameError (4016)  SkillResourceError (4017, .reason)
    │   ├── BlobNotAccessibleError (4018, .reason)
    │   ├── BlobWriteError (4019, .reason)
    │   └── RoomFullError (4101)  RoomNotFoundError (4102)  NotInOfficeError (4103)
    │       CrossOfficeError (4104)
    └── ToolError                     a CallToolResult with isError (code from meta.error_code)
        ├── ToolNotFoundError (4001)  ToolDisabledError (4002)  ToolExecutionError (4003)
        ├── ToolTimeoutError (4004)  ToolConfirmationRequiredError (4005)
        └── ToolAuthorizationError
            ├── ToolAuthorizationRequiredError (4006)
            └── ToolAuthorizationFailedError (4007)

One module per family (like :mod:`a2c_protocol._models`): ``_base`` (the root and the
core's own checks), ``_remote`` (a peer's ErrorPayload), ``_tools`` (a failed tool result).
Conversions both ways: ``error_from_payload(payload)`` and ``RemoteError.to_payload()``;
``tool_error_from_result(result)`` and ``ToolError.result``.
"""

from __future__ import annotations

from ._base import (
    A2CError,
    FieldError,
    InvalidPayloadError,
    InvalidPriorityError,
    InvalidWindowURIError,
)
from ._remote import (
    AnyErrorPayload,
    BadRequestError,
    BlobNotAccessibleError,
    BlobWriteError,
    CapabilityNotSupportedError,
    CrossOfficeError,
    ForbiddenError,
    InternalError,
    InvalidSkillNameError,
    McpServerNotFoundError,
    NotFoundError,
    NotInOfficeError,
    ProtocolVersionError,
    RemoteError,
    RequestTimeoutError,
    RoomFullError,
    RoomNotFoundError,
    SkillNotFoundError,
    SkillResourceError,
    UnauthorizedError,
    error_from_payload,
)
from ._tools import (
    ToolAuthorizationError,
    ToolAuthorizationFailedError,
    ToolAuthorizationRequiredError,
    ToolConfirmationRequiredError,
    ToolDisabledError,
    ToolError,
    ToolExecutionError,
    ToolNotFoundError,
    ToolTimeoutError,
    tool_error_from_result,
)

__all__ = [
    "A2CError",
    "AnyErrorPayload",
    "BadRequestError",
    "BlobNotAccessibleError",
    "BlobWriteError",
    "CapabilityNotSupportedError",
    "CrossOfficeError",
    "FieldError",
    "ForbiddenError",
    "InternalError",
    "InvalidPayloadError",
    "InvalidPriorityError",
    "InvalidSkillNameError",
    "InvalidWindowURIError",
    "McpServerNotFoundError",
    "NotFoundError",
    "NotInOfficeError",
    "ProtocolVersionError",
    "RemoteError",
    "RequestTimeoutError",
    "RoomFullError",
    "RoomNotFoundError",
    "SkillNotFoundError",
    "SkillResourceError",
    "ToolAuthorizationError",
    "ToolAuthorizationFailedError",
    "ToolAuthorizationRequiredError",
    "ToolConfirmationRequiredError",
    "ToolDisabledError",
    "ToolError",
    "ToolExecutionError",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "UnauthorizedError",
    "error_from_payload",
    "tool_error_from_result",
]

# Tracebacks, reprs and pickles name a class by its module: keep the one users saw before the
# split (``a2c_protocol._exceptions.RemoteError``), which this package still resolves.
for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = __name__
del _name, _value
