"""a2c_agent: the Agent role of the A2C-SMCP protocol 0.2.

An Agent connects to a Server, joins an office and calls tools hosted by the Computers of
that office::

    from a2c_agent import AsyncAgent

    async with AsyncAgent("http://127.0.0.1:8000", name="bot") as agent:
        await agent.join_office("office-1")
        print(agent.tools)                       # kept fresh from notify:* events
        result = await agent.call_tool("box-1", "word_count", {"text": "a b c"})

``SyncAgent`` offers the same methods, blocking. ``PROTOCOL_VERSION`` is the protocol
version this SDK speaks (sent as ``a2c_version``), independent of ``__version__``.
"""

# The SDK's own names load on first use (PEP 562): ``a2c-agent --help``, a usage error or a
# refused destination answer without importing python-socketio and the Agent. Type checkers
# read the imports under TYPE_CHECKING.
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from a2c_protocol import (
    PROTOCOL_VERSION,
    A2CResource,
    A2CSkillRef,
    BadRequestError,
    BlobNotAccessibleError,
    BlobWriteError,
    BlobWriteReason,
    CallToolResult,
    CapabilityNotSupportedError,
    ComputerConfigView,
    CrossOfficeError,
    ElicitationRequest,
    ElicitationResponse,
    Event,
    ForbiddenError,
    GetBlobRet,
    GetComputerConfigRet,
    InputCapabilities,
    InputOrigin,
    InputRefusal,
    InputRequest,
    InputResponse,
    InternalError,
    InvalidSkillNameError,
    InvalidWindowURIError,
    McpServerNotFoundError,
    McpServerState,
    NotFoundError,
    NotInOfficeError,
    ProtocolVersionError,
    RemoteError,
    RequestTimeoutError,
    RootsRequest,
    RootsResponse,
    SamplingRequest,
    SamplingResponse,
    SessionInfo,
    SkillNotFoundError,
    SkillResourceError,
    ToolAuthorizationError,
    ToolAuthorizationFailedError,
    ToolAuthorizationRequiredError,
    ToolCallProgress,
    ToolConfirmationRequiredError,
    ToolDisabledError,
    ToolError,
    ToolExecutionError,
    ToolMeta,
    ToolNotFoundError,
    ToolTimeoutError,
    UnauthorizedError,
    WindowURI,
    cancel_reason_of,
    is_cancelled,
    is_timed_out,
)
from a2c_protocol._input import (
    FormField,
    form_fields,
    parse_field,
)

from ._version import __version__

if TYPE_CHECKING:
    from ._agent import (
        AsyncAgent,
        DesktopListener,
        NotificationListener,
        StateListener,
        ToolsListener,
    )
    from ._exceptions import (
        AckTimeoutError,
        AgentConnectionError,
        AgentError,
        AgentStateError,
        BlobIntegrityError,
        BlobLimitError,
        CallNotSentError,
        ConnectionLostError,
        EventUnsupportedError,
        InputRequestsExceededError,
        InputRoundsExceededError,
        InputTimeoutError,
        InvalidResponseError,
        JoinOfficeError,
        LeaveOfficeError,
        SkillIntegrityError,
        ToolCallTimeoutError,
    )
    from ._notify import NotificationStream
    from ._rpc._blobdrain import BLOB_ERROR_KEY
    from ._rpc._blobpull import BlobData
    from ._rpc._input import DEFAULT_MAX_INPUT_ROUNDS, InputHandler, decline_input
    from ._rpc._progress import ProgressCallback
    from ._session._lifecycle import AgentState
    from ._skills import SkillFile, SkillsListener
    from ._sync import SyncAgent
    from ._types import (
        AgentNotification,
        AgentTool,
        NotificationPayload,
        ResourcePage,
        ToolAuthorization,
        raise_for_tool_error,
        resource_priority,
        result_error_code,
        result_text,
        tool_authorization,
    )
    from ._upload._push import Landed

__all__ = [
    "BLOB_ERROR_KEY",
    "DEFAULT_MAX_INPUT_ROUNDS",
    "PROTOCOL_VERSION",
    "A2CResource",
    "A2CSkillRef",
    "AckTimeoutError",
    "AgentConnectionError",
    "AgentError",
    "AgentNotification",
    "AgentState",
    "AgentStateError",
    "AgentTool",
    "AsyncAgent",
    "BadRequestError",
    "BlobData",
    "BlobIntegrityError",
    "BlobLimitError",
    "BlobNotAccessibleError",
    "BlobWriteError",
    "BlobWriteReason",
    "CallNotSentError",
    "CallToolResult",
    "CapabilityNotSupportedError",
    "ComputerConfigView",
    "ConnectionLostError",
    "CrossOfficeError",
    "DesktopListener",
    "ElicitationRequest",
    "ElicitationResponse",
    "Event",
    "EventUnsupportedError",
    "ForbiddenError",
    "FormField",
    "GetBlobRet",
    "GetComputerConfigRet",
    "InputCapabilities",
    "InputHandler",
    "InputOrigin",
    "InputRefusal",
    "InputRequest",
    "InputRequestsExceededError",
    "InputResponse",
    "InputRoundsExceededError",
    "InputTimeoutError",
    "InternalError",
    "InvalidResponseError",
    "InvalidSkillNameError",
    "InvalidWindowURIError",
    "JoinOfficeError",
    "Landed",
    "LeaveOfficeError",
    "McpServerNotFoundError",
    "McpServerState",
    "NotFoundError",
    "NotInOfficeError",
    "NotificationListener",
    "NotificationPayload",
    "NotificationStream",
    "ProgressCallback",
    "ProtocolVersionError",
    "RemoteError",
    "RequestTimeoutError",
    "ResourcePage",
    "RootsRequest",
    "RootsResponse",
    "SamplingRequest",
    "SamplingResponse",
    "SessionInfo",
    "SkillFile",
    "SkillIntegrityError",
    "SkillNotFoundError",
    "SkillResourceError",
    "SkillsListener",
    "StateListener",
    "SyncAgent",
    "ToolAuthorization",
    "ToolAuthorizationError",
    "ToolAuthorizationFailedError",
    "ToolAuthorizationRequiredError",
    "ToolCallProgress",
    "ToolCallTimeoutError",
    "ToolConfirmationRequiredError",
    "ToolDisabledError",
    "ToolError",
    "ToolExecutionError",
    "ToolMeta",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "ToolsListener",
    "UnauthorizedError",
    "WindowURI",
    "__version__",
    "cancel_reason_of",
    "decline_input",
    "form_fields",
    "is_cancelled",
    "is_timed_out",
    "parse_field",
    "raise_for_tool_error",
    "resource_priority",
    "result_error_code",
    "result_text",
    "tool_authorization",
]

#: Public name -> the module that defines it.
_LAZY: dict[str, str] = {
    "AsyncAgent": "._agent",
    "DesktopListener": "._agent",
    "NotificationListener": "._agent",
    "StateListener": "._agent",
    "ToolsListener": "._agent",
    "BLOB_ERROR_KEY": "._rpc._blobdrain",
    "BlobData": "._rpc._blobpull",
    "AckTimeoutError": "._exceptions",
    "AgentConnectionError": "._exceptions",
    "AgentError": "._exceptions",
    "AgentStateError": "._exceptions",
    "BlobIntegrityError": "._exceptions",
    "BlobLimitError": "._exceptions",
    "CallNotSentError": "._exceptions",
    "ConnectionLostError": "._exceptions",
    "EventUnsupportedError": "._exceptions",
    "InvalidResponseError": "._exceptions",
    "JoinOfficeError": "._exceptions",
    "LeaveOfficeError": "._exceptions",
    "SkillIntegrityError": "._exceptions",
    "ToolCallTimeoutError": "._exceptions",
    "AgentState": "._session._lifecycle",
    "NotificationStream": "._notify",
    "ProgressCallback": "._rpc._progress",
    "DEFAULT_MAX_INPUT_ROUNDS": "._rpc._input",
    "InputHandler": "._rpc._input",
    "decline_input": "._rpc._input",
    "InputRoundsExceededError": "._exceptions",
    "InputRequestsExceededError": "._exceptions",
    "InputTimeoutError": "._exceptions",
    "SkillFile": "._skills",
    "SkillsListener": "._skills",
    "SyncAgent": "._sync",
    "Landed": "._upload._push",
    "AgentNotification": "._types",
    "AgentTool": "._types",
    "NotificationPayload": "._types",
    "ResourcePage": "._types",
    "ToolAuthorization": "._types",
    "raise_for_tool_error": "._types",
    "resource_priority": "._types",
    "result_error_code": "._types",
    "result_text": "._types",
    "tool_authorization": "._types",
}


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
