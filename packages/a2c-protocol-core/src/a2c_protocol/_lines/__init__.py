"""Protocol lines 0.2 and 0.4 side by side: pure version and shape translation. No I/O.

A translating Server lets a 0.2 Agent use a 0.4 Computer and the reverse; a client that
speaks 0.4 uses the same shapes. Everything here works on JSON-ready dicts and never
mutates its input. Stable API (other rooms build on it):

Versions (``_versions``)
    ``Line`` (``"0.2"`` | ``"0.4"``), ``LINE_0_2``, ``LINE_0_4``, ``KNOWN_LINES``;
    ``LINE_VERSIONS[line]`` (the version announced on a line: ``0.2.3``, ``0.4.2``);
    ``line_of(version) -> Line | None``; ``parse_lines("0.2,0.4") -> tuple[Line, ...]``;
    ``accepted_ranges(lines) -> [{"min_supported", "max_supported"}, ...]``;
    ``nearest_line(version, lines) -> Line`` (the pair a 4008 body reports).

Relay points (``_relay``)
    ``needs_translation(agent, computer) -> bool``;
    ``translate_request(event, payload, *, agent, computer) -> payload``;
    ``translate_answer(event, answer, *, agent, computer) -> answer``
    (``client:put_blob`` has one shape on both lines; the Server decides who takes uploads).

Shapes (``_shapes``), each one direction, for code that holds a single part
    ``tools_04_to_02`` / ``tools_02_to_04`` (a ``tools`` list), ``tool_name_04_to_02``,
    ``config_04_to_02`` / ``config_02_to_04`` (a whole ``get_config`` answer),
    ``pick_options_04_to_02`` / ``pick_options_02_to_04``,
    ``error_04_to_02`` / ``error_02_to_04`` (4014/4015 server field), ``LEGACY_BUNDLE``,
    ``BUNDLE_SEPARATOR``.

Bundle ids (``_bundle_id``)
    ``bundle_id_problem(text) -> str | None`` (the 0.4 rule for an explicit bundle_id).

The rule that keeps it stateless: a 0.2 MCP server name *is* the 0.4 bundle_id and the
reverse, so config keys, ``get_resources.mcp_server``, skill names ``mcp:<id>:<skill>``
and window hosts keep their values; 0.2 tools shown to 0.4 join the synthetic bundle
``LEGACY_BUNDLE`` (``a2c-0-2__<tool>``). Lossy: 0.4 PickString labels (0.2 sees values).
A 0.4 entry's display ``name`` may differ from its bundle_id (and repeat): a 0.2 Agent is
shown the bundle_ids as keys and addresses those, so no reverse map is needed.
"""

from ._bundle_id import bundle_id_problem
from ._relay import needs_translation, translate_answer, translate_request
from ._shapes import (
    BUNDLE_SEPARATOR,
    LEGACY_BUNDLE,
    config_02_to_04,
    config_04_to_02,
    error_02_to_04,
    error_04_to_02,
    pick_options_02_to_04,
    pick_options_04_to_02,
    tool_name_04_to_02,
    tools_02_to_04,
    tools_04_to_02,
)
from ._versions import (
    KNOWN_LINES,
    LINE_0_2,
    LINE_0_4,
    LINE_VERSIONS,
    Line,
    accepted_ranges,
    line_of,
    nearest_line,
    parse_lines,
)

__all__ = [
    "BUNDLE_SEPARATOR",
    "KNOWN_LINES",
    "LEGACY_BUNDLE",
    "LINE_0_2",
    "LINE_0_4",
    "LINE_VERSIONS",
    "Line",
    "accepted_ranges",
    "bundle_id_problem",
    "config_02_to_04",
    "config_04_to_02",
    "error_02_to_04",
    "error_04_to_02",
    "line_of",
    "nearest_line",
    "needs_translation",
    "parse_lines",
    "pick_options_02_to_04",
    "pick_options_04_to_02",
    "tool_name_04_to_02",
    "tools_02_to_04",
    "tools_04_to_02",
    "translate_answer",
    "translate_request",
]
