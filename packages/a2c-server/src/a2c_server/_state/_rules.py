"""Office rules of protocol 0.2, as pure decisions (no Socket.IO, no I/O).

Rules (rooms-and-security.md §2-§4, events.md §2-§3):

Joining (``server:join_office``)
  J1 ``role`` must equal the session's role: the one it connected with (``auth.role``),
     or its grant's, or the one its first join settled. A session without a role yet
     (a role-less connect) gets it from this join; until then it is in no office, so
     every role-bound request is refused (R1, U1, U2: 4103).
  J2 ``name`` and ``office_id`` are non-empty strings of at most 256 characters.
  J3 Re-joining the office one is in under the same name is an idempotent success; a
     different name in the same office is refused (leave first).
  J4 An Agent already in another office is refused (only Computers auto-leave).
  J5 Names are unique in their office: a name held by another session of the office asked
     for is refused. The same name in another office is no conflict (a name is a routing
     key inside its office; a namespace-wide check would tell anyone allowed one office
     which names are online in every other, and let them squat those names).
  J6 An office holds at most one Agent: ``"Room already has an agent"``.
  J7 A Computer in another office leaves it first (``notify:leave_office`` there).
  J8 A name or seat held by a session the joining one may take over (the same client
     reconnecting, :mod:`a2c_server._state._reclaim` K3) is no conflict: the join goes
     ahead and names the sessions it displaces.

Leaving (``server:leave_office``)
  L1 Only the office one is in can be left.

Requests from Agents (``client:*`` and ``server:list_room``)
  R0 A ``client:tool_call`` ``timeout`` is 1..the deployment's limit seconds (400).
  R1 The sender must be in an office (4103) and be an Agent (403).
  R2 The payload's ``agent`` must be the sender's own name (403, spoofing).
  R3 The target Computer must exist under that name in the sender's office (404,
     ``details.computer_name``): names are looked up in the sender's office only, so a
     Computer of another office is "not connected" like a name nobody holds (the answer
     never tells whether the name is online elsewhere). The namespace words the message
     with what the sender may see, its own office's Computers (:mod:`._absent`).
  R4 The target must share the sender's office (4104; unreachable through the per-office
     lookup, kept as a second line); ``list_room`` may list only the sender's own office
     (4104, which names only the office the sender asked for).

Notifications from clients
  U1 ``server:update_*`` only from a Computer in an office naming itself.
  U2 ``server:tool_call_cancel`` only from an Agent in an office naming itself.

Peers of another 0.2.x PATCH level (spec delta §3.2, §14)
  P1 A Computer that acks an event newer than 0.2.0 with nothing (a 0.2.0 Computer has no
     handler for it) gets its Agent a 404 naming the event, never a bare null.
  P2 A ``client:*`` / ``server:*`` event this Server does not know, sent with an ack, is
     answered with a 400 naming the event.
"""

from __future__ import annotations

import enum
from typing import Any, Final

import attrs

from a2c_protocol import EVENTS, EnterOfficeReq, ErrorCode, ErrorPayload, Event, Role

__all__ = [
    "MAX_NAME_LENGTH",
    "ROOM_HAS_AGENT",
    "JoinDecision",
    "JoinRefusal",
    "Member",
    "Refusal",
    "check_agent_request",
    "check_cancel",
    "check_list_room",
    "check_route",
    "check_update",
    "decide_join",
    "decide_leave",
    "is_protocol_request",
    "tool_timeout_problem",
    "unknown_event_refusal",
    "unsupported_event_refusal",
]

MAX_NAME_LENGTH: Final = 256
ROOM_HAS_AGENT: Final = "Room already has an agent"


class JoinRefusal(enum.StrEnum):
    """Why a ``server:join_office`` was refused: a bounded name for logs and metrics.

    The ack carries a human sentence (the protocol's join ack is ``(False, reason)``);
    this is its machine-readable kind.
    """

    INVALID_PAYLOAD = "invalid_payload"
    UNKNOWN_SESSION = "unknown_session"
    ROLE_MISMATCH = "role_mismatch"
    BAD_IDENTIFIER = "bad_identifier"
    ALREADY_IN_OFFICE = "already_in_office"
    AGENT_IN_OTHER_OFFICE = "agent_in_other_office"
    NAME_TAKEN = "name_taken"
    SEAT_TAKEN = "seat_taken"


@attrs.frozen(kw_only=True)
class Member:
    """One connected session. ``name``/``office_id`` are set while it is in an office."""

    sid: str
    role: Role | None  # None: connected without auth.role, not joined yet
    a2c_version: str
    name: str | None = None
    office_id: str | None = None
    #: Extensions announced at connect (``auth.a2c_extensions``, see ``_uploads``).
    extensions: frozenset[str] = frozenset()
    #: Who may take this session's name over after a reconnect (``_reclaim`` K2), or None.
    reclaim: str | None = None

    @property
    def in_office(self) -> bool:
        return self.office_id is not None


@attrs.frozen(kw_only=True)
class JoinDecision:
    """Outcome of a join request.

    ``ok`` with ``changed=False`` is an idempotent re-join (nothing to do, no
    notification). ``leave_first`` names the office a switching Computer leaves;
    ``displaces`` the sids whose hold the join takes over (J8).
    """

    ok: bool
    reason: str | None = None
    refusal: JoinRefusal | None = None
    changed: bool = False
    leave_first: str | None = None
    displaces: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Refusal:
    """A refused request: the flat error to answer with.

    ``security`` marks refusals that may be an attack (spoofing, cross-office access);
    they are logged at WARNING.
    """

    code: int
    message: str
    details: dict[str, Any] | None = None
    security: bool = False

    def to_payload(self) -> ErrorPayload:
        return ErrorPayload(code=self.code, message=self.message, details=self.details)


def _bad_identifier(label: str, value: str) -> str | None:
    if not value.strip():
        return f"{label} must not be empty"
    if len(value) > MAX_NAME_LENGTH:
        return f"{label} is longer than {MAX_NAME_LENGTH} characters"
    return None


def decide_join(
    member: Member,
    req: EnterOfficeReq,
    *,
    name_owner: str | None,
    office_agent: str | None,
    reclaimable: frozenset[str] = frozenset(),
) -> JoinDecision:
    """Decide ``server:join_office``.

    ``name_owner`` is the sid holding ``req.name`` in ``req.office_id`` (None when free);
    ``office_agent`` the sid of the Agent in ``req.office_id`` (None when there is none);
    ``reclaimable`` the sids among them whose hold this member may take over (J8).
    """
    if member.role is not None and req.role is not member.role:
        return JoinDecision(
            ok=False,
            refusal=JoinRefusal.ROLE_MISMATCH,
            reason=f"Role mismatch: connected as {member.role.value}, "
            f"asked to join as {req.role.value}",
        )
    for label, value in (("name", req.name), ("office_id", req.office_id)):
        problem = _bad_identifier(label, value)
        if problem is not None:
            return JoinDecision(ok=False, reason=problem, refusal=JoinRefusal.BAD_IDENTIFIER)
    if member.office_id == req.office_id:
        if member.name == req.name:
            return JoinDecision(ok=True, changed=False)
        return JoinDecision(
            ok=False,
            refusal=JoinRefusal.ALREADY_IN_OFFICE,
            reason=f"Already in office {req.office_id!r} as {member.name!r}; leave it first",
        )
    # From here req.role is the session's role (J1), also for one whose join settles it.
    if req.role is Role.AGENT and member.office_id is not None:
        return JoinDecision(
            ok=False,
            refusal=JoinRefusal.AGENT_IN_OTHER_OFFICE,
            reason=f"Agent is already in office {member.office_id!r}; leave it first",
        )
    displaces: list[str] = []
    if name_owner is not None and name_owner != member.sid and name_owner in reclaimable:
        displaces.append(name_owner)
    elif name_owner is not None and name_owner != member.sid:
        return JoinDecision(
            ok=False,
            reason=f"Name {req.name!r} is already taken in office {req.office_id!r}",
            refusal=JoinRefusal.NAME_TAKEN,
        )
    seat_held = req.role is Role.AGENT and office_agent not in (None, member.sid)
    if seat_held and office_agent in reclaimable:
        if office_agent not in displaces:
            displaces.append(str(office_agent))
    elif seat_held:
        return JoinDecision(ok=False, reason=ROOM_HAS_AGENT, refusal=JoinRefusal.SEAT_TAKEN)
    return JoinDecision(
        ok=True, changed=True, leave_first=member.office_id, displaces=tuple(displaces)
    )


def decide_leave(member: Member, office_id: str) -> str | None:
    """Decide ``server:leave_office``: None to proceed, else the refusal reason."""
    if member.office_id is None:
        return "Not in any office"
    if member.office_id != office_id:
        return f"Not in office {office_id!r}"
    return None


_ROLE_PHRASE: Final = {Role.AGENT: "an Agent", Role.COMPUTER: "a Computer"}


def _check_self(sender: Member | None, event: str, role: Role, claimed: str) -> Refusal | None:
    """The sender is a ``role`` in an office whose payload names the sender itself."""
    if sender is None or sender.office_id is None:
        return Refusal(code=ErrorCode.NOT_IN_ROOM, message=f"Join an office before sending {event}")
    if sender.role is not role:
        return Refusal(
            code=ErrorCode.FORBIDDEN,
            message=f"Only {_ROLE_PHRASE[role]} may send {event}",
            security=True,
        )
    if claimed != sender.name:
        return Refusal(
            code=ErrorCode.FORBIDDEN,
            message=f"The {role.value} field does not match the sender's registered name",
            security=True,
        )
    return None


def check_agent_request(sender: Member | None, event: str, agent: str) -> Refusal | None:
    """R1 + R2: the sender is an Agent in an office, naming itself in ``agent``."""
    return _check_self(sender, event, Role.AGENT, agent)


def tool_timeout_problem(timeout: int, limit: int) -> str | None:
    """Why a ``client:tool_call`` ``timeout`` is out of bounds (1..``limit`` s), or None."""
    if 1 <= timeout <= limit:
        return None
    return f"must be between 1 and {limit} seconds, got {timeout}"


def check_route(
    sender: Member | None, event: str, agent: str, computer: str, target: Member | None
) -> Refusal | None:
    """R1-R4 for a ``client:*`` request addressed to ``computer``."""
    refusal = check_agent_request(sender, event, agent)
    if refusal is not None:
        return refusal
    if target is None or target.role is not Role.COMPUTER or target.name != computer:
        return Refusal(
            code=ErrorCode.NOT_FOUND,
            message=f"Computer {computer!r} is not connected",
            details={"computer_name": computer},
        )
    if sender is None or target.office_id != sender.office_id:
        return Refusal(
            code=ErrorCode.CROSS_ROOM_ACCESS,
            message=f"Computer {computer!r} is not in your office",
            details={"computer_name": computer},
            security=True,
        )
    return None


def check_list_room(
    sender: Member | None, event: str, agent: str, office_id: str
) -> Refusal | None:
    """R1, R2 and R4 for ``server:list_room``."""
    refusal = check_agent_request(sender, event, agent)
    if refusal is not None:
        return refusal
    if sender is None or sender.office_id != office_id:
        return Refusal(
            code=ErrorCode.CROSS_ROOM_ACCESS,
            message="An Agent may only list its own office",
            security=True,
        )
    return None


def check_update(sender: Member | None, event: str, computer: str) -> Refusal | None:
    """U1: ``server:update_*`` from a Computer in an office naming itself."""
    return _check_self(sender, event, Role.COMPUTER, computer)


def check_cancel(sender: Member | None, event: str, agent: str) -> Refusal | None:
    """U2: ``server:tool_call_cancel`` from the office's Agent naming itself."""
    return check_agent_request(sender, event, agent)


def unsupported_event_refusal(event: Event, computer: str, answer: object) -> Refusal | None:
    """P1: the 404 for a Computer's empty ack to an event it predates, else None.

    Only events added after 0.2.0 qualify: for those an empty ack means "not implemented"
    (python-socketio acks an unhandled event with no arguments); for 0.2.0 events it is a
    broken Computer, which the caller reports as such.
    """
    if answer is not None or not EVENTS[event].added_in_patch:
        return None
    return Refusal(
        code=ErrorCode.NOT_FOUND,
        message=f"Computer {computer!r} does not implement {event.value}",
        details={"event": event.value, "computer_name": computer},
    )


_PROTOCOL_PREFIXES: Final = ("client:", "server:")
_SHOWN: Final = 64  # how much of a client-chosen event name is repeated back


def is_protocol_request(name: str) -> bool:
    """P2: whether an event name is a protocol request (``client:*``/``server:*``), which the
    Server answers even when it does not know the name."""
    return name.startswith(_PROTOCOL_PREFIXES)


def unknown_event_refusal(name: str) -> Refusal | None:
    """P2: the 400 for an unknown ``client:*`` / ``server:*`` event name, else None.

    Names without those prefixes are not protocol requests and get no answer here.
    """
    if not is_protocol_request(name):
        return None
    shown = name if len(name) <= _SHOWN else name[:_SHOWN] + "…"
    return Refusal(
        code=ErrorCode.BAD_REQUEST,
        message=f"Unknown event {shown!r}: this Server does not handle it",
        details={"event": shown},
    )
