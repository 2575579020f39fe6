"""Turning a cattrs failure into the list of field errors, each with its JSON path,
that :class:`InvalidPayloadError` reports."""

from __future__ import annotations

from cattrs.errors import ForbiddenExtraKeysError

from a2c_protocol._exceptions import FieldError

from ._hooks import _TypeMismatch


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ForbiddenExtraKeysError):
        keys = ", ".join(sorted(exc.extra_fields))
        return f"unknown key(s): {keys}"
    if isinstance(exc, KeyError):
        return "required field is missing"
    if isinstance(exc, _TypeMismatch):
        return str(exc)
    if isinstance(exc, ValueError) and "not a valid" in str(exc):
        return str(exc)
    return str(exc) or type(exc).__name__


def _collect(exc: BaseException, path: str, out: list[FieldError]) -> None:
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            note = _note_of(sub)
            if note is None:
                _collect(sub, path, out)
            else:
                _collect(sub, f"{path}{note}", out)
        return
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            out.append(FieldError(f"{path}.{key}", "unknown key"))
        return
    out.append(FieldError(path, _describe(exc)))


def _note_of(exc: BaseException) -> str | None:
    for note in getattr(exc, "__notes__", ()):
        name = getattr(note, "name", None)
        if name is not None:
            return f".{name}"
        index = getattr(note, "index", None)
        if index is not None:
            return f"[{index!r}]" if not isinstance(index, int) else f"[{index}]"
    return None
