"""Decoding a Computer configuration document: the strict converter plus the rules a
config file has beyond its shape (keys match names or bundle_ids, durations parse, ids are
unique)."""

from __future__ import annotations

import re
from typing import Final

from a2c_protocol._exceptions import FieldError, InvalidPayloadError
from a2c_protocol._lines._bundle_id import bundle_id_problem
from a2c_protocol._models import (
    GetComputerConfigRet,
    PickStringInput,
    SseServerConfig,
    StreamableServerConfig,
)

from ._converter import _CONFIG, _structure


def config_from_json(data: object) -> GetComputerConfigRet:
    """Decode a Computer configuration document strictly (unknown keys are errors).

    Also enforces that every server's key in ``servers`` is its ``name`` (or, for an entry
    with an explicit ``bundle_id``, that bundle_id, which must be valid), that each
    ``${input:...}``-free ISO 8601 duration parses, and that input ids are unique.
    """
    config = _structure(_CONFIG, GetComputerConfigRet, data, "computer config")
    errors: list[FieldError] = []
    for key, server in config.servers.items():
        at = f"$.servers[{key!r}]"
        problem = None if server.bundle_id is None else bundle_id_problem(server.bundle_id)
        if problem is not None:
            errors.append(FieldError(f"{at}.bundle_id", problem))
        if server.bundle_id is not None and key not in (server.name, server.bundle_id):
            errors.append(
                FieldError(
                    at,
                    f"the key must be the name {server.name!r} or the bundle_id "
                    f"{server.bundle_id!r}, got {key!r}",
                )
            )
        elif server.name != key and server.bundle_id is None:
            errors.append(
                FieldError(f"{at}.name", f"must equal its key {key!r}, got {server.name!r}")
            )
        if isinstance(server, SseServerConfig) and server.mcp_era == "modern":
            errors.append(
                FieldError(
                    f"{at}.mcp_era",
                    "SSE speaks the handshake era only (2026-07-28 has no SSE transport): "
                    "use 'auto' or 'handshake', or the server's Streamable HTTP endpoint",
                )
            )
        if isinstance(server, StreamableServerConfig):
            for attr in ("timeout", "sse_read_timeout"):
                value = getattr(server.server_parameters, attr)
                if "${input:" in value:
                    continue  # resolved on the Computer at start-up, checked then
                try:
                    parse_iso8601_duration(value)
                except ValueError as exc:
                    errors.append(FieldError(f"{at}.server_parameters.{attr}", str(exc)))
        default = server.default_tool_meta
        if default is not None and default.alias is not None:
            errors.append(
                FieldError(
                    f"{at}.default_tool_meta.alias",
                    "an alias in default_tool_meta would give every tool the same name",
                )
            )
    seen: set[str] = set()
    for index, item in enumerate(config.inputs or []):
        if item.id in seen:
            errors.append(FieldError(f"$.inputs[{index}].id", f"duplicate input id {item.id!r}"))
        seen.add(item.id)
        if (
            isinstance(item, PickStringInput)
            and item.default is not None
            and item.default not in item.options
        ):
            errors.append(
                FieldError(f"$.inputs[{index}].default", "default must be one of options")
            )
    if errors:
        raise InvalidPayloadError("computer config", errors)
    return config


# ----------------------------------------------------------------- durations

_DURATION_RE: Final = re.compile(
    r"P(?!$)(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?=\d)(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?",
    re.ASCII,
)


def parse_iso8601_duration(text: str) -> float:
    """Seconds in an ISO 8601 duration such as ``PT30S``, ``PT5M`` or ``P1DT2H``.

    Years, months and weeks are refused: their length in seconds is not fixed.
    """
    match = _DURATION_RE.fullmatch(text) if isinstance(text, str) else None
    if match is None or text.endswith("T"):
        raise ValueError(f"{text!r} is not an ISO 8601 duration like 'PT30S' or 'PT5M'")
    parts = {k: float(v) for k, v in match.groupdict().items() if v is not None}
    return (
        parts.get("d", 0.0) * 86400
        + parts.get("h", 0.0) * 3600
        + parts.get("m", 0.0) * 60
        + parts.get("s", 0.0)
    )
