"""Grants: which role, name and offices an identity may use, as pure rules.

A grant comes from a token's ``a2c`` claim (``{"role", "name", "offices"}``) or from the
Server's own ``--allow-offices`` patterns. An office pattern is an exact office id or a
prefix followed by one trailing ``*`` (``team-*``); a lone ``*`` covers every office.
``*`` anywhere else is refused when the grant is read, so a typo never widens a grant.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from a2c_protocol import Role

__all__ = [
    "GRANT_CLAIM",
    "Grant",
    "GrantError",
    "check_office_pattern",
    "connect_problem",
    "join_problem",
    "office_matches",
]

#: The token claim that carries the grant.
GRANT_CLAIM: Final = "a2c"
_MAX_PATTERNS: Final = 256
_MAX_TEXT: Final = 256
_ROLES: Final = {role.value: role for role in Role}


class GrantError(ValueError):
    """A grant (claim or pattern) is malformed; the message is safe to show."""


def check_office_pattern(pattern: str) -> str:
    """Return ``pattern`` if it is a valid office pattern, else raise :class:`GrantError`."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > _MAX_TEXT:
        raise GrantError("an office pattern must be a non-empty string of at most 256 characters")
    if "*" in pattern[:-1]:
        raise GrantError(f"office pattern {pattern!r}: '*' is only allowed at the end")
    return pattern


def office_matches(pattern: str, office_id: str) -> bool:
    """Whether ``pattern`` (exact, or a prefix ending in ``*``) covers ``office_id``."""
    if pattern.endswith("*"):
        return office_id.startswith(pattern[:-1])
    return office_id == pattern


def _patterns(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class Grant:
    """What an identity may do: ``role``/``name`` None mean any; ``offices`` are patterns."""

    offices: tuple[str, ...] = attrs.field(converter=_patterns)
    role: Role | None = None
    name: str | None = None

    def covers(self, office_id: str) -> bool:
        return any(office_matches(p, office_id) for p in self.offices)

    @classmethod
    def of_patterns(cls, patterns: Iterable[str]) -> Grant:
        """A grant limited to offices only (``--allow-offices``)."""
        return cls(offices=tuple(check_office_pattern(p) for p in patterns))

    @classmethod
    def from_claim(cls, claim: Any) -> Grant:
        """Read the ``a2c`` claim of a token; raise :class:`GrantError` if malformed."""
        if not isinstance(claim, Mapping):
            raise GrantError(f"the {GRANT_CLAIM!r} claim must be an object")
        unknown = set(claim) - {"role", "name", "offices"}
        if unknown:
            # A field this Server does not know might be a restriction it would not apply.
            raise GrantError(f"the {GRANT_CLAIM!r} claim has unknown fields: {sorted(unknown)}")
        offices = claim.get("offices")
        if not isinstance(offices, list) or not offices or len(offices) > _MAX_PATTERNS:
            raise GrantError(f"the {GRANT_CLAIM!r} claim needs a non-empty list 'offices'")
        role_text = claim.get("role")
        role = None
        if role_text is not None:
            role = _ROLES.get(role_text) if isinstance(role_text, str) else None
            if role is None:
                raise GrantError(f"the {GRANT_CLAIM!r} claim's role must be agent or computer")
        name = claim.get("name")
        if name is not None and (not isinstance(name, str) or not name or len(name) > _MAX_TEXT):
            raise GrantError(f"the {GRANT_CLAIM!r} claim's name must be a non-empty string")
        return cls(offices=tuple(check_office_pattern(p) for p in offices), role=role, name=name)


def connect_problem(grant: Grant | None, role: Role | None) -> str | None:
    """Why a connection as ``role`` contradicts ``grant`` (None: it does not, or no role)."""
    if role is not None and grant is not None and grant.role is not None and grant.role is not role:
        return f"Forbidden: this identity may only connect as {grant.role.value}"
    return None


def join_problem(grant: Grant | None, office_id: str, role: Role, name: str) -> str | None:
    """Why joining ``office_id`` as ``role``/``name`` exceeds ``grant`` (None: allowed).

    The message names the office (the client asked for it) but never the grant's patterns.
    """
    if grant is None:
        return None
    if grant.role is not None and grant.role is not role:
        return f"Forbidden: this identity may not join office {office_id!r} as {role.value}"
    # The office first: a token for another office is told so, not that its name is wrong.
    if not grant.covers(office_id):
        return f"Forbidden: this identity may not join office {office_id!r}"
    if grant.name is not None and grant.name != name:
        return f"Forbidden: this identity may not use the name {name!r}"
    return None
