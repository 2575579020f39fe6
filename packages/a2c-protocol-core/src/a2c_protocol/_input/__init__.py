"""Input requests during a tool call (elicitation, sampling, roots): pure rules. No I/O.

Our extension of 0.2 and 0.4 (docs/compatibility.md, *Extension: input requests*): an MCP
server's request for input travels to the Agent as the tool call's answer, in MCP
2026-07-28's multi-round-trip shape, and the Agent's answers come back on a new call. The
Server only relays. Stable API (the roles and the bridge build on it):

Shapes (``_shapes``)
    ``InputCapabilities`` (the ``a2c_input`` object), the typed requests
    ``ElicitationRequest`` / ``SamplingRequest`` / ``RootsRequest`` (``InputRequest``) with
    their ``InputOrigin``, ``InputRequired`` (a parsed answer), the responses
    ``ElicitationResponse`` / ``SamplingResponse`` / ``RootsResponse`` / ``InputRefusal``
    (``InputResponse``); ``decline_for``; the method names and ``A2C_ERROR``.

JSON spellings (``_json``)
    ``is_input_required``, ``parse_input_required``, ``input_required_answer``,
    ``input_request_of``, ``response_to_wire``, ``response_from_wire``.

Forms (``_forms``)
    ``FormField``, ``form_fields``, ``secret_fields``, ``content_problems``, ``parse_field``.

Limits (``_limits``)
    ``DEFAULT_MAX_REQUESTS_PER_ROUND``, ``DEFAULT_MAX_REQUESTS_PER_CALL``, ``round_refusal``,
    ``call_refusal``, ``url_refusal``: what a request may carry, whoever relays it.

Pending states (``_pending``)
    ``PendingInputs`` (binding to the asking call, single use, expiry), ``InputBinding``,
    ``StateRefusal``, ``params_digest``.
"""

from ._forms import FormField, content_problems, form_fields, parse_field, secret_fields
from ._json import (
    input_request_of,
    input_required_answer,
    is_input_required,
    parse_input_required,
    response_from_wire,
    response_to_wire,
)
from ._limits import (
    DEFAULT_MAX_REQUESTS_PER_CALL,
    DEFAULT_MAX_REQUESTS_PER_ROUND,
    call_refusal,
    round_refusal,
    url_refusal,
)
from ._pending import InputBinding, PendingInputs, StateRefusal, params_digest
from ._shapes import (
    A2C_ERROR,
    ELICIT,
    INPUT_REQUIRED,
    LIST_ROOTS,
    SAMPLE,
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
    decline_for,
)

__all__ = [
    "A2C_ERROR",
    "DEFAULT_MAX_REQUESTS_PER_CALL",
    "DEFAULT_MAX_REQUESTS_PER_ROUND",
    "ELICIT",
    "INPUT_REQUIRED",
    "LIST_ROOTS",
    "SAMPLE",
    "ElicitationRequest",
    "ElicitationResponse",
    "FormField",
    "InputBinding",
    "InputCapabilities",
    "InputOrigin",
    "InputRefusal",
    "InputRequest",
    "InputRequired",
    "InputResponse",
    "PendingInputs",
    "RootsRequest",
    "RootsResponse",
    "SamplingRequest",
    "SamplingResponse",
    "StateRefusal",
    "call_refusal",
    "content_problems",
    "decline_for",
    "form_fields",
    "input_request_of",
    "input_required_answer",
    "is_input_required",
    "params_digest",
    "parse_field",
    "parse_input_required",
    "response_from_wire",
    "response_to_wire",
    "round_refusal",
    "secret_fields",
    "url_refusal",
]
