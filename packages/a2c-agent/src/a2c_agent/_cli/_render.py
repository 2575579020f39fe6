"""The readable (table) form of ``a2c-agent`` output: pure functions of the JSON output.

Rules:

* Nothing is dropped: every content block of a tool result is shown; a binary block (image,
  audio, blob resource) as one placeholder line with its type, MIME type and size.
* A missing value prints as ``-`` (never as ``0.00`` or an empty cell).
* Tables fit ``width`` columns: the widest columns shrink first and their cells wrap, up to
  :data:`MAX_CELL_LINES` lines, the last one ending in ``…`` when text was cut.
* Names are never broken: the columns holding what a user types back (a tool, Computer,
  MCP server, skill or member name, a URI) keep their full width; only the others
  (descriptions, tags) shrink. A terminal too narrow for the names wraps the line itself.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, Final

from a2c_agent._types import result_error_code
from a2c_protocol import A2CResource, CallToolResult, from_wire

from ._files import SAVED_TO_KEY

__all__ = [
    "MISSING",
    "content_lines",
    "desktop_hint",
    "owning_server",
    "render_table",
    "server_status",
    "table",
]

#: What a missing value prints as.
MISSING: Final = "-"
#: A wrapped cell shows at most this many lines.
MAX_CELL_LINES: Final = 4
#: A column never shrinks below this many characters (or its header).
MIN_COLUMN: Final = 8
_GAP: Final = "  "

#: The ``meta`` key under which the Computer names the MCP server that owns a tool. Only
#: the ``a2c_`` namespace is ours: other keys are the MCP server's own ``_meta``.
OWNER_META_KEY: Final = "a2c_mcp_server"


def _cell(value: object) -> str:
    if value is None or value == "":
        return MISSING
    return " ".join(str(value).split())  # one line per cell: newlines would break rows


def _fit(natural: list[int], minimum: list[int], width: int | None) -> list[int]:
    widths = list(natural)
    if width is None:
        return widths
    budget = width - len(_GAP) * (len(widths) - 1)
    while sum(widths) > budget:
        widest = max(range(len(widths)), key=lambda i: widths[i] - minimum[i])
        if widths[widest] <= minimum[widest]:
            break  # every column at its minimum: the terminal is too narrow; let it wrap
        widths[widest] -= 1
    return widths


def _wrap(text: str, width: int) -> list[str]:
    if len(text) <= width:
        return [text]
    lines = textwrap.wrap(text, width) or [""]
    if len(lines) > MAX_CELL_LINES:
        lines = lines[:MAX_CELL_LINES]
        last = lines[-1]
        lines[-1] = (last if len(last) < width else last[: width - 1]) + "…"
    return lines


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    width: int | None = None,
    whole: Sequence[int] = (0,),
) -> str:
    """A plain-text table that fits ``width`` columns (no limit when None); the columns
    in ``whole`` (names) are never shrunk, so their cells never break."""
    cells = [[_cell(c) for c in row] for row in rows]
    heads = [str(h) for h in headers]
    natural = [max([len(heads[i])] + [len(r[i]) for r in cells]) for i in range(len(heads))]
    minimum = [
        natural[i] if i in whole else min(natural[i], max(len(heads[i]), MIN_COLUMN))
        for i in range(len(heads))
    ]
    widths = _fit(natural, minimum, width)
    lines = [_GAP.join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip()]
    lines.append(_GAP.join("-" * w for w in widths))
    for row in cells:
        wrapped = [_wrap(c, w) for c, w in zip(row, widths, strict=True)]
        for n in range(max(len(w) for w in wrapped)):
            parts = [
                (w[n] if n < len(w) else "").ljust(cw)
                for w, cw in zip(wrapped, widths, strict=True)
            ]
            lines.append(_GAP.join(parts).rstrip())
    return "\n".join(lines)


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"


def _base64_size(data: object) -> str:
    if not isinstance(data, str):
        return "size unknown"
    text = data.strip()
    return _size(len(text) * 3 // 4 - text.count("=", len(text) - 2))


def content_lines(block: Mapping[str, Any]) -> list[str]:
    """How one MCP content block prints: its text, or a placeholder naming what it is."""
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return [block["text"]]
    saved = (block.get("_meta") or {}).get(SAVED_TO_KEY)
    if isinstance(saved, str):
        return [f"[{kind} saved to {saved}]"]
    if kind in ("image", "audio"):
        mime = block.get("mimeType") or MISSING
        return [f"[{kind} {mime}, {_base64_size(block.get('data'))}]"]
    if kind == "resource_link":
        name = f" ({block['name']})" if block.get("name") else ""
        mime = f" {block['mimeType']}" if block.get("mimeType") else ""
        return [f"[resource_link {block.get('uri', MISSING)}{name}{mime}]"]
    if kind == "resource" and isinstance(block.get("resource"), Mapping):
        resource = block["resource"]
        head = f"[resource {resource.get('uri', MISSING)} {resource.get('mimeType') or MISSING}"
        if isinstance(resource.get("text"), str):
            return [head + "]", resource["text"]]
        return [f"{head}, {_base64_size(resource.get('blob'))}]"]
    return [f"[{kind or 'unknown'} content] " + json.dumps(block, ensure_ascii=False)]


def _call(data: Mapping[str, Any]) -> str:
    result = from_wire(CallToolResult, data)
    lines = [line for block in result.content for line in content_lines(block)]
    if result.structured_content is not None and not lines:
        lines.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    body = "\n".join(lines) if lines else "(no content)"
    if result.is_error:
        return f"tool error {result_error_code(result) or ''}".rstrip() + f": {body}"
    return body


def owning_server(tool: Mapping[str, Any]) -> str | None:
    """The MCP server that owns a tool, when the Computer says so in the tool's ``meta``."""
    value = (tool.get("meta") or {}).get(OWNER_META_KEY)
    return value if isinstance(value, str) and value else None


def _auto_apply(tool: Mapping[str, Any]) -> str:
    """``yes`` (runs without confirmation), ``no`` (needs one), ``-`` (not said)."""
    value = (tool.get("tool_meta") or {}).get("auto_apply")
    return MISSING if value is None else ("yes" if value else "no")


def _priority(resource: A2CResource) -> str:
    value = (resource.annotations or {}).get("priority")
    if value is None:
        return MISSING
    return f"{value:.2f}" if isinstance(value, int | float) else str(value)


def desktop_hint(computer: str) -> str:
    """Why a desktop can be empty, for a human reading an empty answer."""
    return (
        f"the desktop of {computer!r} is empty: none of its MCP servers lists a window:// "
        "resource (or the ones listed are private or failed to read); "
        f"'a2c-agent resources {computer} SERVER' shows what a server lists"
    )


def server_status(
    server: Mapping[str, Any],
    name: str,
    tools: Sequence[Mapping[str, Any]] | None,
    states: Mapping[str, Any] | None = None,
) -> str:
    """What the config table says about one MCP server.

    ``disabled``; ``failed: <reason>`` (or ``starting``, ``stopped``) when the Computer
    reports the server's state (``a2c_server_states``) and it is not ready; else, when
    the Computer names each tool's owner, how many tools it exposes (``no tools``: every
    tool lost a name clash, or it lists none); else ``enabled``. A ready server's MCP
    protocol version follows when the Computer reports it (``3 tools, MCP 2026-07-28``).
    """
    if server.get("disabled"):
        return "disabled"
    state = (states or {}).get(name)
    if isinstance(state, Mapping) and state.get("status") not in (None, "ready"):
        error = state.get("error")
        return f"{state['status']}: {error}" if error else str(state["status"])
    protocol = state.get("protocol") if isinstance(state, Mapping) else None
    era = f", MCP {protocol}" if isinstance(protocol, str) and protocol else ""
    owners = [owning_server(t) for t in tools or ()]
    if not any(owners):
        return f"enabled{era}"
    count = owners.count(name)
    return (f"{count} tool{'' if count == 1 else 's'}" if count else "no tools") + era


def render_table(
    kind: str,
    data: Any,
    *,
    width: int | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The human-readable form of a command's JSON output, fitting ``width`` columns.

    ``tools`` (the Computer's tools, as ``tools`` prints them) lets the config table
    count each MCP server's tools.
    """
    rows: list[tuple[object, ...]]
    if kind == "room":
        rows = [(s["name"], s["role"], s["a2c_version"], s["sid"]) for s in data]
        return table(("NAME", "ROLE", "A2C", "SID"), rows, width=width)
    if kind == "tools":
        rows = [
            (
                t["name"],
                owning_server(t),
                _auto_apply(t),
                ",".join((t.get("tool_meta") or {}).get("tags") or []),
                t.get("description"),
            )
            for t in data
        ]
        heads = ("TOOL", "MCP SERVER", "AUTO_APPLY", "TAGS", "DESCRIPTION")
        return table(heads, rows, width=width, whole=(0, 1))
    if kind == "config":
        rows = [
            (
                name,
                server.get("type"),
                server_status(server, name, tools, data.get("a2c_server_states")),
            )
            for name, server in data["servers"].items()
        ]
        return table(("SERVER", "TYPE", "STATUS"), rows, width=width)
    if kind == "skills":
        rows = [(s["name"], s["source"], s.get("version"), s.get("description")) for s in data]
        return table(("NAME", "SOURCE", "VERSION", "DESCRIPTION"), rows, width=width)
    if kind == "blob":
        return f"{data['file']}: {_size(data['size'])} {data['mime_type']}, sha256 {data['sha256']}"
    if kind == "desktop":
        return "\n\n".join(f"--- {i + 1} ---\n{d}" for i, d in enumerate(data)) or "(empty)"
    if kind == "resources":
        resources = [from_wire(A2CResource, r) for r in data["resources"]]
        rows = [(r.uri, r.name, r.mime_type, _priority(r)) for r in resources]
        text = table(("URI", "NAME", "MIME", "PRIORITY"), rows, width=width, whole=(0, 1))
        if data.get("next_cursor"):
            text += f"\n(next cursor: {data['next_cursor']})"
        return text
    if kind == "call":
        return _call(data)
    return json.dumps(data, ensure_ascii=False, indent=2)
