"""A2C-SMCP protocol 0.2 (to 0.2.3) core: wire models, versions, errors, markers. No I/O.

Everything a role package needs to speak the protocol lives here, with no dependency
beyond ``attrs`` and ``cattrs``::

    from a2c_protocol import PROTOCOL_VERSION, Event, ToolCallReq, from_wire, to_wire

    req = from_wire(ToolCallReq, payload)      # raises InvalidPayloadError with every field error
    data = to_wire(req)                        # JSON-ready dict in the protocol's spelling
"""

from ._codes import (
    WS_CLOSE_VERSION_REJECTED,
    BlobReason,
    BlobWriteReason,
    ErrorCode,
    SkillResourceReason,
)
from ._events import (
    CLIENT_EVENTS,
    EVENTS,
    NAMESPACE,
    UPDATE_EVENTS,
    Event,
    EventKind,
    EventSpec,
    ExtensionEvent,
)
from ._exceptions import (
    A2CError,
    AnyErrorPayload,
    BadRequestError,
    BlobNotAccessibleError,
    BlobWriteError,
    CapabilityNotSupportedError,
    CrossOfficeError,
    FieldError,
    ForbiddenError,
    InternalError,
    InvalidPayloadError,
    InvalidPriorityError,
    InvalidSkillNameError,
    InvalidWindowURIError,
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
    ToolAuthorizationError,
    ToolAuthorizationFailedError,
    ToolAuthorizationRequiredError,
    ToolConfirmationRequiredError,
    ToolDisabledError,
    ToolError,
    ToolExecutionError,
    ToolNotFoundError,
    ToolTimeoutError,
    UnauthorizedError,
    error_from_payload,
    tool_error_from_result,
)
from ._handshake import (
    ERROR_CODE_HEADER,
    VERSION_QUERY_PARAM,
    error_from_handshake_response,
    reconnect_delays,
    version_rejected_by_close,
    with_version_query,
)
from ._input import (
    ElicitationRequest,
    ElicitationResponse,
    InputCapabilities,
    InputOrigin,
    InputRefusal,
    InputRequest,
    InputRequired,
    InputResponse,
    RootsRequest,
    RootsResponse,
    SamplingRequest,
    SamplingResponse,
    parse_input_required,
)
from ._jsonlog import JsonLogFormatter
from ._lines._negotiation import retry_line
from ._markers import (
    A2C_BLOB_HANDLE,
    A2C_CANCEL_REASON,
    A2C_CANCELLED,
    A2C_SHA256,
    A2C_TIMEOUT,
    A2C_TOTAL_SIZE,
    CANCEL_REASON_AGENT_GONE,
    CANCEL_REASON_AGENT_REQUESTED,
    CANCEL_REASON_COMPUTER_SHUTDOWN,
    CANCEL_REASON_SERVER_GONE,
    CANCEL_REASONS,
    LEGACY_CANCELLED_KEY,
    LEGACY_TIMEOUT_KEY,
    BlobSideband,
    blob_sideband_of,
    cancel_reason_of,
    cancelled_result,
    is_cancelled,
    is_timed_out,
    result_marker,
    timeout_result,
    with_blob_sideband,
    without_blob_sideband,
)
from ._mime import DEFAULT_MIME_TYPE, MIME_TYPES, is_text_mime, mime_type_for
from ._models import (
    DEFAULT_SKILL_REL_PATH,
    PUT_BLOB_EXTENSION,
    A2CResource,
    A2CSkillRef,
    AgentCallData,
    Attributes,
    AttributeValue,
    CallToolResult,
    CapabilityNotSupportedPayload,
    CommandInput,
    ComputerConfig,
    ComputerConfigView,
    EnterOfficeNotification,
    EnterOfficeReq,
    ErrorPayload,
    GetBlobReq,
    GetBlobRet,
    GetComputerConfigReq,
    GetComputerConfigRet,
    GetDeskTopReq,
    GetDeskTopRet,
    GetResourcesReq,
    GetResourcesRet,
    GetSkillReq,
    GetSkillRet,
    GetSkillsReq,
    GetSkillsRet,
    GetToolsReq,
    GetToolsRet,
    InputRequiredResult,
    JsonObject,
    LeaveOfficeNotification,
    LeaveOfficeReq,
    ListRoomReq,
    ListRoomRet,
    McpEra,
    MCPServerConfig,
    MCPServerInput,
    McpServerNotFoundPayload,
    McpServerState,
    MCPServerStdioParameters,
    MCPServerStreamableHttpParameters,
    MCPSSEParameters,
    OAuthSettings,
    PickStringInput,
    PromptStringInput,
    PutBlobReq,
    PutBlobRet,
    Role,
    SessionInfo,
    SMCPTool,
    SseServerConfig,
    StdioServerConfig,
    StreamableServerConfig,
    ToolCallProgress,
    ToolCallReq,
    ToolMeta,
    UpdateComputerConfigReq,
    UpdateDesktopNotification,
    UpdateMCPConfigNotification,
    UpdateSkillsNotification,
    UpdateToolListNotification,
    VersionMismatchPayload,
)
from ._otel_setup import (
    install_tracer_provider,
    shutdown_tracer_provider,
    traces_endpoint,
    tracing_wanted,
)
from ._priority import (
    DEFAULT_PRIORITY,
    migrate_v01_window,
    priority_from_v01,
    read_fullscreen,
    read_priority,
    window_resource,
)
from ._progress import PROGRESS_MIN_INTERVAL, ProgressGate
from ._redact import REDACTED, RedactingFilter, SecretRedactor
from ._rejoin import (
    RECLAIM_AUTH_KEY,
    REJOIN_BUDGET,
    join_refusal_may_pass,
    new_reclaim_secret,
    rejoin_delays,
)
from ._structured import (
    A2C_STRUCTURED_REFS,
    detach_structured_duplicates,
    restore_structured_refs,
)
from ._token_file import read_token_file, token_file_auth, token_flags_problem
from ._version import __version__
from ._versioning import (
    PROTOCOL_VERSION,
    InvalidVersionError,
    ProtocolVersion,
    is_compatible,
    supported_range,
)
from ._window import WINDOW_SCHEME, WindowURI, is_window_uri
from ._wire import (
    A2C_TOOL_META_KEY,
    MCP_TOOL_ANNOTATION_KEY,
    config_from_json,
    decode_tool_meta,
    encode_tool_meta,
    error_payload_from_wire,
    from_wire,
    is_error_payload,
    parse_iso8601_duration,
    remote_error_of,
    to_wire,
    tool_meta_of,
    with_tool_meta,
)

# The public surface, one short list per family of names (``test_core_public_api.py`` pins
# it). Type checkers read ``+=`` of a literal list, so each name stays an explicit export.

# versions, the handshake, re-joining
__all__ = [
    "ERROR_CODE_HEADER", "PROTOCOL_VERSION", "RECLAIM_AUTH_KEY", "REJOIN_BUDGET",
    "VERSION_QUERY_PARAM", "InvalidVersionError", "ProtocolVersion", "__version__",
    "error_from_handshake_response", "is_compatible", "join_refusal_may_pass",
    "new_reclaim_secret", "reconnect_delays", "rejoin_delays", "retry_line", "supported_range",
    "version_rejected_by_close", "with_version_query",
]  # fmt: skip
# the event catalogue and error codes
__all__ += [
    "CLIENT_EVENTS", "EVENTS", "NAMESPACE", "UPDATE_EVENTS", "WS_CLOSE_VERSION_REJECTED",
    "BlobReason", "BlobWriteReason", "ErrorCode", "Event", "EventKind", "EventSpec",
    "ExtensionEvent", "SkillResourceReason",
]  # fmt: skip
# the exception tree
__all__ += [
    "A2CError", "AnyErrorPayload", "BadRequestError", "BlobNotAccessibleError", "BlobWriteError",
    "CapabilityNotSupportedError", "CrossOfficeError", "FieldError", "ForbiddenError",
    "InternalError", "InvalidPayloadError", "InvalidPriorityError", "InvalidSkillNameError",
    "InvalidWindowURIError", "McpServerNotFoundError", "NotFoundError", "NotInOfficeError",
    "ProtocolVersionError", "RemoteError", "RequestTimeoutError", "RoomFullError",
    "RoomNotFoundError", "SkillNotFoundError", "SkillResourceError", "ToolAuthorizationError",
    "ToolAuthorizationFailedError", "ToolAuthorizationRequiredError",
    "ToolConfirmationRequiredError", "ToolDisabledError", "ToolError", "ToolExecutionError",
    "ToolNotFoundError", "ToolTimeoutError", "UnauthorizedError", "error_from_payload",
    "tool_error_from_result",
]  # fmt: skip
# the wire models
__all__ += [
    "DEFAULT_SKILL_REL_PATH", "PUT_BLOB_EXTENSION", "A2CResource", "A2CSkillRef", "AgentCallData",
    "AttributeValue", "Attributes", "CallToolResult", "CapabilityNotSupportedPayload",
    "CommandInput", "ComputerConfig", "ComputerConfigView", "EnterOfficeNotification",
    "EnterOfficeReq", "ErrorPayload", "GetBlobReq", "GetBlobRet", "GetComputerConfigReq",
    "GetComputerConfigRet", "GetDeskTopReq", "GetDeskTopRet", "GetResourcesReq", "GetResourcesRet",
    "GetSkillReq", "GetSkillRet", "GetSkillsReq", "GetSkillsRet", "GetToolsReq", "GetToolsRet",
    "InputRequiredResult", "JsonObject", "LeaveOfficeNotification", "LeaveOfficeReq",
    "ListRoomReq", "ListRoomRet", "MCPSSEParameters", "MCPServerConfig", "MCPServerInput",
    "MCPServerStdioParameters", "MCPServerStreamableHttpParameters", "McpEra",
    "McpServerNotFoundPayload", "McpServerState", "OAuthSettings", "PickStringInput",
    "PromptStringInput", "PutBlobReq", "PutBlobRet", "Role", "SMCPTool", "SessionInfo",
    "SseServerConfig", "StdioServerConfig", "StreamableServerConfig", "ToolCallProgress",
    "ToolCallReq", "ToolMeta", "UpdateComputerConfigReq", "UpdateDesktopNotification",
    "UpdateMCPConfigNotification", "UpdateSkillsNotification", "UpdateToolListNotification",
    "VersionMismatchPayload",
]  # fmt: skip
# their JSON spellings
__all__ += [
    "A2C_TOOL_META_KEY", "MCP_TOOL_ANNOTATION_KEY", "config_from_json", "decode_tool_meta",
    "encode_tool_meta", "error_payload_from_wire", "from_wire", "is_error_payload",
    "parse_iso8601_duration", "remote_error_of", "to_wire", "tool_meta_of", "with_tool_meta",
]  # fmt: skip
# input requests during a tool call
__all__ += [
    "ElicitationRequest", "ElicitationResponse", "InputCapabilities", "InputOrigin",
    "InputRefusal", "InputRequest", "InputRequired", "InputResponse", "RootsRequest",
    "RootsResponse", "SamplingRequest", "SamplingResponse", "parse_input_required",
]  # fmt: skip
# result markers: cancellation, timeouts, blob sidebands, structured content
__all__ += [
    "A2C_BLOB_HANDLE", "A2C_CANCELLED", "A2C_CANCEL_REASON", "A2C_SHA256", "A2C_STRUCTURED_REFS",
    "A2C_TIMEOUT", "A2C_TOTAL_SIZE", "CANCEL_REASONS", "CANCEL_REASON_AGENT_GONE",
    "CANCEL_REASON_AGENT_REQUESTED", "CANCEL_REASON_COMPUTER_SHUTDOWN",
    "CANCEL_REASON_SERVER_GONE", "LEGACY_CANCELLED_KEY", "LEGACY_TIMEOUT_KEY", "BlobSideband",
    "blob_sideband_of", "cancel_reason_of", "cancelled_result", "detach_structured_duplicates",
    "is_cancelled", "is_timed_out", "restore_structured_refs", "result_marker", "timeout_result",
    "with_blob_sideband", "without_blob_sideband",
]  # fmt: skip
# desktop windows and priorities
__all__ += [
    "DEFAULT_PRIORITY", "WINDOW_SCHEME", "WindowURI", "is_window_uri", "migrate_v01_window",
    "priority_from_v01", "read_fullscreen", "read_priority", "window_resource",
]  # fmt: skip
# MIME types, progress, logs, tracing, token files
__all__ += [
    "DEFAULT_MIME_TYPE", "MIME_TYPES", "PROGRESS_MIN_INTERVAL", "REDACTED", "JsonLogFormatter",
    "ProgressGate", "RedactingFilter", "SecretRedactor", "install_tracer_provider", "is_text_mime",
    "mime_type_for", "read_token_file", "shutdown_tracer_provider", "token_file_auth",
    "token_flags_problem", "traces_endpoint", "tracing_wanted",
]  # fmt: skip
