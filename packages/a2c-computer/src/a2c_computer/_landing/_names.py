"""The name an upload lands under: the Agent's hint, made harmless on every system.

Rules of :func:`sanitize` (pure, no I/O):

* only the last path component of the hint counts (no directories, no ``..``);
* every character outside ``A-Z a-z 0-9 . _ -`` becomes ``_``;
* leading dots and dashes are dropped (no hidden files, nothing that reads as an option),
  and so are trailing dots (Windows drops them itself, so ``a.`` and ``a`` would be one file);
* at most 100 characters, the extension kept;
* a Windows device name (``CON PRN AUX NUL COM0-9 LPT0-9``, any case, alone or before a
  dot: ``nul.txt``, ``Com1.tar.gz``) gets ``_`` after it (``CON_``, ``nul_.txt``): a landing
  dir shared with Windows (a mount, a copy, a zip of it) must not hold a name that opens a
  device there;
* an empty result is ``upload``.

The name never overwrites an existing file: :func:`candidates` yields the name, then a few
numbered variants (``stem-N.ext`` from the number the caller remembers for that name), then
random ones (``stem-<8 hex>.ext``), so finding a free name costs a bounded number of tries
however many uploads share one name.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from typing import Final

__all__ = ["NUMBERED_TRIES", "PARTIAL_DIR", "candidates", "numbered", "sanitize"]

#: Partial uploads live here, inside the landing dir (same file system: the final step is
#: a link, never a copy), under their upload id, never under their final name.
PARTIAL_DIR: Final = ".a2c-partial"

#: Numbered names tried before random ones.
NUMBERED_TRIES: Final = 8

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_DEVICE = re.compile(r"(?i)(CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])(?=\.|$)")
_MAX_NAME = 100
_MAX_EXT = 16


def sanitize(hint: str | None) -> str:
    """A file name safe to create directly inside the landing dir (on POSIX and Windows)."""
    last = re.split(r"[/\\]", hint or "")[-1]
    name = _cut(_UNSAFE.sub("_", last).lstrip(".-")).rstrip(".")
    if _DEVICE.match(name):
        device, dot, rest = name.partition(".")
        # "CON_..." can never read as a device again, whatever the cut leaves of the rest.
        name = _cut(f"{device}_{dot}{rest}").rstrip(".")
    return name or "upload"


def _cut(name: str) -> str:
    if len(name) <= _MAX_NAME:
        return name
    stem, dot, ext = name.rpartition(".")
    if dot and stem and len(ext) <= _MAX_EXT:
        return stem[: _MAX_NAME - len(ext) - 1] + "." + ext
    return name[:_MAX_NAME]


def numbered(name: str, suffix: str) -> str:
    """``stem-<suffix>.ext`` of ``name`` (the extension is what follows the last dot)."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, dot, ext = name, "", ""
    return f"{stem}-{suffix}{dot}{ext}"


def candidates(
    name: str, first_number: int = 2, *, token: Callable[[], str] = lambda: secrets.token_hex(4)
) -> Iterator[str]:
    """``name``, ``NUMBERED_TRIES`` numbered variants from ``first_number``, then random ones
    (endless: the caller stops at one it created)."""
    yield name
    for number in range(first_number, first_number + NUMBERED_TRIES):
        yield numbered(name, str(number))
    while True:
        yield numbered(name, token())
