"""Files and progress for the ``a2c-agent`` command: binary result items, blob downloads."""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ._dest import write_free

__all__ = ["SAVED_TO_KEY", "SAVE_DIR_PREFIX", "ProgressBar", "save_binaries"]

#: ``_meta`` key naming the file a binary item was written to (CLI output only).
SAVED_TO_KEY = "a2c_saved_to"


def _carrier(item: dict[str, Any]) -> tuple[dict[str, Any], str, str] | None:
    kind = item.get("type")
    if kind in ("image", "audio") and isinstance(item.get("data"), str):
        return item, "data", str(item.get("mimeType") or "")
    resource = item.get("resource")
    if kind == "resource" and isinstance(resource, dict) and isinstance(resource.get("blob"), str):
        return resource, "blob", str(resource.get("mimeType") or "")
    return None


#: The default ``--save-dir`` is a new directory whose name starts with this, under the
#: system temp dir (``$TMPDIR``): the current directory is where the user happens to be,
#: not where they asked files to go.
SAVE_DIR_PREFIX = "a2c-agent-"


def save_binaries(
    result: dict[str, Any],
    directory: Path | None,
    stem: str,
    report: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """``result`` with each non-empty binary item written to ``directory`` and emptied.

    ``directory`` None: a new private directory under the system temp dir, made for the
    first item (a result without binary items makes none). Item ``n`` goes to
    ``<stem>-<n><ext>``, or the next free name: an existing file is never
    overwritten. ``report`` gets one line per item saying where it went; an item that
    cannot be written stays inline (its data is not lost) and ``report`` says why.
    """
    safe_stem = re.sub(r"[^A-Za-z0-9_.-]", "_", stem) or "item"
    content = []
    for index, item in enumerate(result.get("content") or []):
        found = _carrier(item) if isinstance(item, dict) else None
        if found is None or not found[0][found[1]]:
            content.append(item)
            continue
        holder, key, mime = found
        try:
            data = base64.b64decode(holder[key], validate=True)
        except (binascii.Error, ValueError):
            content.append(item)
            continue
        extension = mimetypes.guess_extension(mime.split(";")[0].strip()) or ".bin"
        try:
            if directory is None:
                directory = Path(tempfile.mkdtemp(prefix=f"{SAVE_DIR_PREFIX}{safe_stem}-"))
            path = write_free(directory, f"{safe_stem}-{index}", extension, data)
        except OSError as exc:
            report(f"content[{index}] not saved ({exc.strerror or exc}); it stays inline")
            content.append(item)
            continue
        report(f"content[{index}] ({mime or 'binary'}, {len(data)} bytes) saved to {path}")
        new_item = dict(item)
        if holder is item:
            new_item[key] = ""
        else:
            new_item["resource"] = {**holder, key: ""}
        new_item["_meta"] = {**(item.get("_meta") or {}), SAVED_TO_KEY: str(path)}
        content.append(new_item)
    return {**result, "content": content}


class ProgressBar:
    """A one-line ``[#####     ]  42%  1.2/2.9 MB`` bar, redrawn at most 10 times a second."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self._stream = stream
        self._width = width
        self._last = 0.0

    def update(self, received: int, total: int) -> None:
        now = time.monotonic()
        if received < total and now - self._last < 0.1:
            return
        self._last = now
        share = received / total if total else 1.0
        filled = int(share * self._width)
        bar = "#" * filled + " " * (self._width - filled)
        self._stream.write(
            f"\r[{bar}] {share * 100:5.1f}%  {received / 1e6:.1f}/{total / 1e6:.1f} MB"
        )
        self._stream.flush()

    def finish(self) -> None:
        self._stream.write("\n")
        self._stream.flush()
