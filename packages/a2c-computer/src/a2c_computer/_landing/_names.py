"""The name an upload lands under: the Agent's hint, made harmless.

Rules: only the last path component of the hint counts (no directories, no ``..``); every
character outside ``A-Z a-z 0-9 . _ -`` becomes ``_``; leading dots and dashes are dropped
(no hidden files, nothing that reads as an option); at most 100 characters, the extension
kept; an empty result is ``upload``. The name never overwrites: :func:`candidates` yields
the name, then ``stem-2.ext``, ``stem-3.ext``, ... for the caller to create exclusively.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

__all__ = ["PARTIAL_DIR", "candidates", "sanitize"]

#: Partial uploads live here, inside the landing dir (same file system: the final step is
#: a link, never a copy), under their upload id, never under their final name.
PARTIAL_DIR: Final = ".a2c-partial"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_NAME = 100
_MAX_EXT = 16


def sanitize(hint: str | None) -> str:
    """A file name safe to create directly inside the landing dir."""
    last = re.split(r"[/\\]", hint or "")[-1]
    name = _UNSAFE.sub("_", last).lstrip(".-")
    if len(name) > _MAX_NAME:
        stem, dot, ext = name.rpartition(".")
        if dot and stem and len(ext) <= _MAX_EXT:
            name = stem[: _MAX_NAME - len(ext) - 1] + "." + ext
        else:
            name = name[:_MAX_NAME]
    return name or "upload"


def candidates(name: str) -> Iterator[str]:
    """``name``, then numbered variants of it (endless: the caller stops at one it created)."""
    yield name
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, dot, ext = name, "", ""
    number = 2
    while True:
        yield f"{stem}-{number}{dot}{ext}"
        number += 1
