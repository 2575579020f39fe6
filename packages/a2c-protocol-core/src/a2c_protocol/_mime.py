"""Deterministic MIME types and the "is this text" rule (spec delta §4.8, 0.2.3).

A Computer must name a file's MIME from a table built into the implementation, never from
the host's registry (Python's ``mimetypes`` reads ``/etc/mime.types`` and the Windows
registry), so one file gets one MIME on every machine. The table holds the eight entries
the protocol requires plus common IANA types; everything else is
``application/octet-stream``.

Whether a MIME is text decides inline ``body`` versus ``blob_handle``: text if the
top-level type is ``text``, or the structured-syntax suffix is ``+json``, ``+xml`` or
``+yaml``, or the essence is one of five listed ``application/*`` types.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = ["DEFAULT_MIME_TYPE", "MIME_TYPES", "is_text_mime", "mime_type_for"]

#: The MIME of a file whose extension the table does not know.
DEFAULT_MIME_TYPE: Final = "application/octet-stream"

_REQUIRED: Final = {
    # The protocol's minimum table (0.2.3, MUST).
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".json": "application/json",
    ".xml": "application/xml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".rst": "text/x-rst",
}

_EXTRA: Final = {
    # Text that skill packages commonly hold (scripts must stay text so they go inline).
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".js": "application/javascript",
    ".mjs": "application/javascript",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".bash": "text/x-shellscript",
    ".ps1": "text/plain",
    ".bat": "text/plain",
    ".sql": "text/plain",
    ".log": "text/plain",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".svg": "image/svg+xml",
    ".ipynb": "application/x-ipynb+json",
    # Binary.
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".ico": "image/vnd.microsoft.icon",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".pdf": "application/pdf",
    ".zip": "application/zip",
    ".gz": "application/gzip",
    ".tgz": "application/gzip",
    ".tar": "application/x-tar",
    ".wasm": "application/wasm",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
}

#: Lowercase extension (with its dot) → MIME. Read-only; the one table every role uses.
MIME_TYPES: Final[Mapping[str, str]] = MappingProxyType({**_EXTRA, **_REQUIRED})

_TEXT_SUFFIXES: Final = frozenset({"json", "xml", "yaml"})
_TEXT_ESSENCES: Final = frozenset(
    {
        "application/json",
        "application/xml",
        "application/yaml",
        "application/toml",
        "application/javascript",
    }
)


def _extension(path: str) -> str:
    """The lowercase extension of a POSIX path's last segment, or ``""``.

    A leading dot does not start an extension (``.skillenv`` has none), as in
    :func:`posixpath.splitext`.
    """
    name = path.rsplit("/", 1)[-1]
    stem = name.lstrip(".")
    dot = stem.rfind(".")
    return stem[dot:].lower() if dot > 0 else ""


def mime_type_for(path: str) -> str:
    """The MIME of the file at POSIX ``path`` (only the name's extension counts).

    Case-insensitive on the extension; :data:`DEFAULT_MIME_TYPE` when unknown. Pure: the
    file is never opened and the host's MIME registry is never consulted.
    """
    return MIME_TYPES.get(_extension(path), DEFAULT_MIME_TYPE)


def is_text_mime(mime: str) -> bool:
    """Whether ``mime`` is text by the 0.2.3 rule (parameters and case are ignored).

    >>> is_text_mime("text/markdown"), is_text_mime("application/ld+json; charset=utf-8")
    (True, True)
    >>> is_text_mime("image/png"), is_text_mime("application/octet-stream")
    (False, False)
    """
    essence = mime.split(";", 1)[0].strip().lower()
    top, slash, subtype = essence.partition("/")
    if not slash or not top or not subtype:
        return False
    if top == "text":
        return True
    if "+" in subtype and subtype.rsplit("+", 1)[1] in _TEXT_SUFFIXES:
        return True
    return essence in _TEXT_ESSENCES
