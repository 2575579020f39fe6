"""The public surface of a2c_agent is pinned: changing it must be deliberate."""

import inspect

import a2c_agent

EXPECTED = [
    "ElicitationRequest",
    "ElicitationResponse",
    "FormField",
    "InputCapabilities",
    "InputOrigin",
    "InputRefusal",
    "InputRequest",
    "InputResponse",
    "RootsRequest",
    "RootsResponse",
    "SamplingRequest",
    "SamplingResponse",
    "form_fields",
    "parse_field",
    "DEFAULT_MAX_INPUT_ROUNDS",
    "InputHandler",
    "decline_input",
    "InputRoundsExceededError",
    "InputRequestsExceededError",
    "InputTimeoutError",
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
    "Landed",
    "BlobIntegrityError",
    "BlobLimitError",
    "BlobNotAccessibleError",
    "BlobWriteError",
    "BlobWriteReason",
    "CallNotSentError",
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
    "ComputerConfigView",
    "McpServerState",
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


def test_public_names_are_pinned():
    assert sorted(a2c_agent.__all__) == sorted(EXPECTED)
    for name in EXPECTED:
        assert getattr(a2c_agent, name) is not None


def test_protocol_version_is_the_core_one_not_the_package_version():
    import a2c_protocol

    assert a2c_agent.PROTOCOL_VERSION == a2c_protocol.PROTOCOL_VERSION == "0.2.3"
    assert a2c_agent.__version__ == "0.2.1"


def test_every_agent_error_has_one_root():
    for name in (
        "AckTimeoutError",
        "AgentConnectionError",
        "AgentStateError",
        "CallNotSentError",
        "ConnectionLostError",
        "EventUnsupportedError",
        "InputRequestsExceededError",
        "InputTimeoutError",
        "InvalidResponseError",
        "JoinOfficeError",
        "LeaveOfficeError",
        "ToolCallTimeoutError",
    ):
        assert issubclass(getattr(a2c_agent, name), a2c_agent.AgentError)


def test_readme_examples_compile():
    import pathlib
    import re

    readme = pathlib.Path(a2c_agent.__file__).parents[2] / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    assert len(blocks) >= 2
    for block in blocks:
        compile(block, str(readme), "exec")


def test_requests_wait_at_least_30_s_by_default():
    # Spec checklist: the ack wait for client:get_skill / client:get_blob is at least 30 s
    # (a Computer staging a large file takes a while; a lost peer shows as a disconnect).
    # SyncAgent takes AsyncAgent's options as they are.
    default = inspect.signature(a2c_agent.AsyncAgent).parameters["request_timeout"].default
    assert default >= 30
