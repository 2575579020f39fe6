"""The Agent's own exceptions; every one derives from :class:`AgentError`.

::

    a2c_protocol.A2CError
    ├── AgentError                        root of everything a2c_agent raises itself
    │   ├── AgentStateError               an operation not allowed in the current lifecycle state
    │   ├── AgentConnectionError          the Socket.IO connection could not be opened / was lost
    │   │   └── ConnectionLostError       the connection dropped while a request was waiting
    │   ├── JoinOfficeError               ``server:join_office`` answered ``[false, reason]``
    │   ├── LeaveOfficeError              ``server:leave_office`` answered ``[false, reason]``
    │   ├── AckTimeoutError               no ack within ``request_timeout`` (also a TimeoutError)
    │   ├── ToolCallTimeoutError          a tool call outlived its timeout (it may have run)
    │   ├── CallNotSentError              a tool call could not be sent within its timeout
    │   ├── InputRoundsExceededError      a tool kept asking for input past max_input_rounds
    │   ├── InputRequestsExceededError    a round (or a call) carried more input requests than taken
    │   ├── InputTimeoutError             no answer to a tool's input request before it expired
    │   ├── InvalidResponseError          a peer's answer does not match the protocol model
    │   ├── BlobIntegrityError            pulled bytes never matched their size / SHA-256
    │   ├── BlobLimitError                a blob is larger than the caller allows
    │   └── SkillIntegrityError           a skill file's bytes did not match its size / SHA-256
    ├── RemoteError (from a2c_protocol)   a flat ErrorPayload ack, typed by code:
    │   BadRequestError 400, UnauthorizedError 401, ForbiddenError 403, NotFoundError 404,
    │   RequestTimeoutError 408, InternalError 500, ProtocolVersionError 4008/4900,
    │   McpServerNotFoundError 4014, CapabilityNotSupportedError 4015,
    │   NotInOfficeError 4103, CrossOfficeError 4104,
    │   BlobNotAccessibleError 4018 (``reason``: invalid_handle, forbidden, gone, range),
    │   SkillNotFoundError 4014 (``details.name``), InvalidSkillNameError 4016,
    │   SkillResourceError 4017 (``reason``: traversal, forbidden, not_found, too_large) …
    └── InvalidWindowURIError (from a2c_protocol)  a window URI with a query/fragment etc.

Tool-level failures (``isError: true``) are *results*, never raised by ``call_tool``; see
:func:`a2c_agent.raise_for_tool_error` to turn one into the core ``ToolError`` tree.
"""

from __future__ import annotations

from a2c_protocol import A2CError, CallToolResult, FieldError, timeout_result

__all__ = [
    "AckTimeoutError",
    "AgentConnectionError",
    "AgentError",
    "AgentStateError",
    "BlobIntegrityError",
    "BlobLimitError",
    "CallNotSentError",
    "ConnectionLostError",
    "EventUnsupportedError",
    "InputRequestsExceededError",
    "InputRoundsExceededError",
    "InputTimeoutError",
    "InvalidResponseError",
    "JoinOfficeError",
    "LeaveOfficeError",
    "SkillIntegrityError",
    "ToolCallTimeoutError",
]


class AgentError(A2CError):
    """Root of every exception raised by ``a2c_agent`` itself."""


class AgentStateError(AgentError, RuntimeError):
    """The agent is not in a state that allows the operation (e.g. not connected)."""


class AgentConnectionError(AgentError, ConnectionError):
    """The connection to the Server could not be opened, or it is down right now."""


class ConnectionLostError(AgentConnectionError):
    """The Socket.IO connection dropped while this request waited for its answer.

    Liveness comes from Socket.IO's ``disconnect`` event, never from an ack timeout, so a
    pending request fails with this as soon as the transport is gone. ``may_have_run`` is
    True when the request had gone out (a tool call may have run: retry only an
    idempotent one), False when it could not be sent at all.
    """

    def __init__(self, message: str, *, may_have_run: bool = False) -> None:
        super().__init__(message)
        #: The request was sent before the connection dropped: a tool call may have run.
        self.may_have_run = may_have_run


class JoinOfficeError(AgentError):
    """The Server refused ``server:join_office``; ``reason`` is its message."""

    def __init__(self, office_id: str, reason: str | None) -> None:
        self.office_id = office_id
        self.reason = reason or "join refused"
        super().__init__(f"cannot join office {office_id!r}: {self.reason}")


class LeaveOfficeError(AgentError):
    """The Server refused ``server:leave_office``; ``reason`` is its message."""

    def __init__(self, office_id: str, reason: str | None) -> None:
        self.office_id = office_id
        self.reason = reason or "leave refused"
        super().__init__(f"cannot leave office {office_id!r}: {self.reason}")


class AckTimeoutError(AgentError, TimeoutError):
    """No answer to a request within the agent's ``request_timeout``."""

    def __init__(self, event: str, timeout: float) -> None:
        self.event = event
        self.timeout = timeout
        super().__init__(f"no answer to {event} within {timeout:g} s")


class EventUnsupportedError(AgentError):
    """A request newer than protocol 0.2.0 got no answer, or an empty one.

    A Server or Computer of an older PATCH level does not implement it: a 0.2.0 Server
    leaves ``client:get_skills`` unanswered, a 0.2.0 peer with class-based handlers acks it
    with nothing. Every 0.2.x passes every 0.2.x version gate, so this is how it shows.
    ``cause`` is ``"no_answer"`` (after ``timeout`` seconds) or ``"empty_answer"``;
    ``since`` is the protocol version that added ``event``. A 0.2.1+ Server relaying an
    old Computer's empty ack answers with a flat 404 naming the event instead.
    """

    def __init__(self, event: str, since: str, cause: str, timeout: float | None = None) -> None:
        self.event = event
        self.since = since
        self.cause = cause
        self.timeout = timeout
        what = (
            f"no answer to {event} within {timeout:g} s"
            if timeout is not None
            else f"an empty answer to {event}"
        )
        super().__init__(
            f"{what}: the Server or the Computer may predate protocol {since}, which added {event}"
        )


class ToolCallTimeoutError(AgentError, TimeoutError):
    """A tool call got no answer within its timeout plus the grace period.

    The call was sent, so the tool may have run (``may_have_run`` is always True;
    ``delivered`` is None: the Agent cannot know whether it reached the Computer). Retry
    only an idempotent tool. The agent has already sent ``server:tool_call_cancel`` for
    ``req_id`` when this is raised; the Computer cancels the call on a best-effort basis.
    ``waited`` is how long the agent waited (``timeout`` plus the grace).

    With the default grace a Server of this project always answers first (408 or 500
    with ``details.delivered``; see "Timeouts" in docs/agent.md), so this means the
    Server itself did not answer in time.
    """

    #: The call was sent: it may have run.
    may_have_run = True
    #: Whether the Computer got the call: unknown to the Agent.
    delivered: bool | None = None

    def __init__(
        self,
        computer: str,
        tool_name: str,
        req_id: str,
        timeout: float,
        waited: float | None = None,
    ) -> None:
        self.computer = computer
        self.tool_name = tool_name
        self.req_id = req_id
        self.timeout = timeout
        self.waited = timeout if waited is None else waited
        super().__init__(
            f"tool {tool_name!r} on {computer!r} got no answer within {self.waited:g} s "
            f"(timeout {timeout:g} s); it may have run: retry only an idempotent call "
            f"(cancel sent for req_id {req_id})"
        )

    @property
    def result(self) -> CallToolResult:
        """The timeout as a tool result, for callers that hand results on (e.g. to an LLM).

        ``isError`` with ``meta.a2c_timeout: true`` and ``meta.error_code: 4004``, the
        same shape a Computer-side timeout has (0.2.3).
        """
        return timeout_result(
            f"Tool {self.tool_name!r} on {self.computer!r} got no answer within "
            f"{self.waited:g} s; it may have run, and a cancel was sent",
            extra={"computer": self.computer},
        )


class CallNotSentError(AgentError, TimeoutError):
    """A tool call that never reached a Computer could not be sent within its timeout.

    Calls refused in ways that prove they were not delivered (the agent reconnecting, a
    Server node shutting down, a Computer whose name is kept for its return: see
    "Rolling restarts" in docs/agent.md) are sent again until they go through or
    ``timeout`` is spent; then this is raised. The tool did not run (``may_have_run`` is
    False, ``delivered`` False): retrying is safe. ``cause`` is the last refusal (also
    ``__cause__``), ``tries`` how many times the call was refused.
    """

    #: Never sent to a Computer: the tool did not run.
    may_have_run = False
    #: Whether the Computer got the call: it did not.
    delivered: bool | None = False

    def __init__(
        self, computer: str, tool_name: str, timeout: float, tries: int, cause: BaseException
    ) -> None:
        self.computer = computer
        self.tool_name = tool_name
        self.timeout = timeout
        self.tries = tries
        self.cause = cause
        super().__init__(
            f"tool {tool_name!r} on {computer!r} was not sent within {timeout:g} s "
            f"({tries} {'try' if tries == 1 else 'tries'}; it did not run): {cause}"
        )


class InvalidResponseError(AgentError, ValueError):
    """A peer answered with data that does not match the protocol's model."""

    def __init__(self, what: str, errors: list[FieldError] | None = None) -> None:
        self.errors = errors or []
        detail = "; ".join(str(e) for e in self.errors)
        super().__init__(f"invalid {what}" + (f": {detail}" if detail else ""))


class BlobIntegrityError(AgentError):
    """The bytes of a blob did not match the ``total_size``/``sha256`` the Computer gave.

    Raised after the pull was restarted from offset 0 the allowed number of times; the
    source kept changing or the transfer kept corrupting it.
    """

    def __init__(self, handle: str, expected: str, actual: str, attempts: int) -> None:
        self.handle = handle
        self.expected = expected
        self.actual = actual
        self.attempts = attempts
        super().__init__(
            f"blob digest mismatch after {attempts} attempt(s): expected sha256 {expected}, "
            f"got {actual}"
        )


class BlobLimitError(AgentError):
    """A blob is larger than the caller's limit; nothing (more) was pulled."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"blob of {size} bytes exceeds the limit of {limit} bytes")


class SkillIntegrityError(AgentError):
    """The bytes of a skill file did not match the ``total_size``/``sha256`` of its answer."""

    def __init__(self, name: str, rel_path: str, expected: str, actual: str) -> None:
        self.name = name
        self.rel_path = rel_path
        self.expected = expected
        self.actual = actual
        super().__init__(f"skill {name!r} file {rel_path!r}: expected {expected}, got {actual}")


class InputRoundsExceededError(AgentError):
    """A tool kept asking for input past the agent's ``max_input_rounds``.

    The Computer was told that the last requests are cancelled; the call has no result.
    """

    def __init__(self, computer: str, tool: str, rounds: int) -> None:
        super().__init__(
            f"tool {tool!r} on {computer!r} asked for input more than {rounds} times; "
            "raise max_input_rounds if it needs more"
        )
        self.computer = computer
        self.tool = tool
        self.rounds = rounds


class InputRequestsExceededError(AgentError):
    """A Computer asked more input requests than the agent takes: in one round more than
    ``max_input_requests_per_round`` (``scope == "round"``), or over the rounds of one call
    more than ``max_input_requests_per_call`` (``scope == "call"``).

    No handler was asked about that round; the Computer was told its requests are
    cancelled, and the call has no result.
    """

    def __init__(
        self, computer: str, tool: str, *, scope: str, count: int, cap: int, reason: str
    ) -> None:
        super().__init__(f"tool {tool!r} on {computer!r}: {reason}")
        self.computer = computer
        self.tool = tool
        self.scope = scope
        self.count = count
        self.cap = cap


class InputTimeoutError(AgentError, TimeoutError):
    """The input handler had not answered when the Computer's ``expires_in`` for the round
    ran out: the SDK stopped waiting, told the Computer the requests are cancelled, and the
    call has no result."""

    def __init__(self, computer: str, tool: str, expires_in: float) -> None:
        super().__init__(
            f"tool {tool!r} on {computer!r}: the input requests were not answered within "
            f"{expires_in:g} s, the time the Computer keeps them"
        )
        self.computer = computer
        self.tool = tool
        self.expires_in = expires_in
