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

from a2c_protocol import (
    PROTOCOL_VERSION,
    A2CResource,
    A2CSkillRef,
    BadRequestError,
    BlobNotAccessibleError,
    CallToolResult,
    CapabilityNotSupportedError,
    CrossOfficeError,
    Event,
    ForbiddenError,
    GetBlobRet,
    GetComputerConfigRet,
    InternalError,
    InvalidSkillNameError,
    InvalidWindowURIError,
    McpServerNotFoundError,
    NotFoundError,
    NotInOfficeError,
    ProtocolVersionError,
    RemoteError,
    RequestTimeoutError,
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

from ._agent import (
    AsyncAgent,
    DesktopListener,
    NotificationListener,
    StateListener,
    ToolsListener,
)
from ._blobdrain import BLOB_ERROR_KEY
from ._blobpull import BlobData
from ._exceptions import (
    AckTimeoutError,
    AgentConnectionError,
    AgentError,
    AgentStateError,
    BlobIntegrityError,
    BlobLimitError,
    ConnectionLostError,
    EventUnsupportedError,
    InvalidResponseError,
    JoinOfficeError,
    LeaveOfficeError,
    SkillIntegrityError,
    ToolCallTimeoutError,
)
from ._lifecycle import AgentState
from ._notify import NotificationStream
from ._progress import ProgressCallback
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
from ._version import __version__

__all__ = [
    "BLOB_ERROR_KEY",
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
    "CallToolResult",
    "CapabilityNotSupportedError",
    "ConnectionLostError",
    "CrossOfficeError",
    "DesktopListener",
    "Event",
    "EventUnsupportedError",
    "ForbiddenError",
    "GetBlobRet",
    "GetComputerConfigRet",
    "InternalError",
    "InvalidResponseError",
    "InvalidSkillNameError",
    "InvalidWindowURIError",
    "JoinOfficeError",
    "LeaveOfficeError",
    "McpServerNotFoundError",
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
    "is_cancelled",
    "is_timed_out",
    "raise_for_tool_error",
    "resource_priority",
    "result_error_code",
    "result_text",
    "tool_authorization",
]
