"""Peer text made safe to print on a terminal: control characters shown, never obeyed.

What a Computer or an MCP server sends (a message, a URL, a server or tool name, a form's
titles, a sampling prompt, an error) reaches the user's terminal through ``a2c-agent``. A
terminal obeys control characters: ESC starts CSI and OSC sequences (move the cursor,
rewrite a line, set the window title, write the clipboard), CR returns to the line's start,
BEL rings, and the C1 range (U+0080..U+009F) holds one-character forms of the same. So
:func:`visible` writes every C0 and C1 control character and DEL as a visible escape
(``\\x1b``, ``\\r``, ``\\x9b``), and the bidirectional overrides and isolates (U+202A..U+202E,
U+2066..U+2069, which can make a link read backwards) as ``\\u202e``. A newline and a tab
stay as they are in multi-line text (a message keeps its lines), and are escaped too in
one-line text (``one_line=True``: a name, a URL, a field label), where a line break could
fake the next line of a prompt. Pure, no I/O; text without such characters is returned as is.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["visible"]

_BIDI: Final = "\u202a-\u202e\u2066-\u2069"
_MULTI_LINE: Final = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_ONE_LINE: Final = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object, *, one_line: bool = False) -> str:
    """``text`` (``str()`` of it) with control characters escaped (see the module rules)."""
    shown = text if isinstance(text, str) else str(text)
    return (_ONE_LINE if one_line else _MULTI_LINE).sub(_escape, shown)
