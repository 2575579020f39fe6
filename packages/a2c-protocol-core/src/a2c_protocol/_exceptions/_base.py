"""The root of the tree and the errors of the core's own checks: payloads, URIs, priorities."""

from __future__ import annotations

from a2c_protocol._codes import ErrorCode
from a2c_protocol._models import ErrorPayload

__all__ = [
    "A2CError",
    "FieldError",
    "InvalidPayloadError",
    "InvalidPriorityError",
    "InvalidWindowURIError",
]


class A2CError(Exception):
    """Root of every exception raised by the A2C-SMCP packages."""


class FieldError(tuple[str, str]):
    """``(path, problem)``: one validation failure, e.g. ``("$.timeout", "expected int")``."""

    __slots__ = ()

    def __new__(cls, path: str, problem: str) -> FieldError:
        return super().__new__(cls, (path, problem))

    @property
    def path(self) -> str:
        return self[0]

    @property
    def problem(self) -> str:
        return self[1]

    def __str__(self) -> str:
        field = self.path.rsplit(".", 1)[-1].split("[", 1)[0].lstrip("$") or "payload"
        return f"{field}: {self.problem} @ {self.path}"


class InvalidPayloadError(A2CError, ValueError):
    """A payload does not match its model. ``errors`` lists every field that failed."""

    def __init__(self, model: str, errors: list[FieldError]) -> None:
        self.model = model
        self.errors = errors
        super().__init__(f"invalid {model}: " + "; ".join(str(e) for e in errors))

    def to_payload(self) -> ErrorPayload:
        """The flat 400 ErrorPayload a role answers with."""
        return ErrorPayload(
            code=ErrorCode.BAD_REQUEST,
            message=str(self),
            details={"errors": [{"path": e.path, "problem": e.problem} for e in self.errors]},
        )


class InvalidWindowURIError(A2CError, ValueError):
    """A string is not a valid ``window://`` URI; the message names the rule broken."""


class InvalidPriorityError(A2CError, ValueError):
    """A window priority is not a number in the allowed range."""
