"""A 0.4 session of our Computer: each request into our own shapes, each answer into 0.4's.

No I/O: the link's handlers run between :meth:`Session04.request` and
:meth:`Session04.answer`. In 0.4 an MCP server *is* its bundle_id (``a2c_computer._bundles``:
explicit in the config, or derived from the name), everywhere an Agent sees or names one:

* ``get_tools``: ``{bundle_id}__{tool}`` names and ``bundle_id``; ``tool_call`` resolves
  such a name back (another bundle stays unknown: 4001); a result's ``meta.mcp_server`` /
  ``meta.mcp_server_name`` (server down, upstream auth) is the bundle_id;
* ``get_config``: servers keyed by bundle_id, each entry with its ``bundle_id`` and its
  display ``name`` as written (two may share one); ``a2c_server_states`` keyed the same;
* ``get_resources.mcp_server`` is a bundle_id: one no server has (a ``servers`` key that is
  not a bundle_id included) is answered 4014 at once; 4014/4015 name the bundle_id asked;
* skills: ``mcp:<bundle_id>:<skill>`` names and ``mcp:<bundle_id>`` sources, and
  ``get_skill`` takes such a name (its answer and its 4014 repeat the name asked);
* the rest is the generic 0.2 -> 0.4 translation (:mod:`a2c_protocol._lines`): error key
  spellings, PickString options.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from a2c_computer._bundles import Bundles, ServerOf, tool_name_from_04, tools_for_04
from a2c_computer._skills._names import MCP_PREFIX, normalize_server_segment
from a2c_protocol import ErrorCode, Event, McpServerNotFoundError, SkillNotFoundError, to_wire
from a2c_protocol._lines import (
    LINE_0_2,
    LINE_0_4,
    bundle_id_problem,
    config_02_to_04,
    translate_answer,
    translate_request,
)

__all__ = ["Session04"]

_SERVER_KEYS: Final = ("mcp_server", "mcp_server_name")
_SERVER_ERRORS: Final = frozenset(
    {ErrorCode.MCP_SERVER_NOT_FOUND, ErrorCode.MCP_CAPABILITY_NOT_SUPPORTED}
)


@attrs.frozen
class Session04:
    """The 0.4 view of one configuration (built per request: the config may be reloaded)."""

    bundles: Bundles
    server_of: ServerOf

    def request(self, event: Event, data: Any) -> tuple[Any, Any]:
        """``(request in our shapes, None)``, or ``(None, answer)`` when answered at once."""
        if not isinstance(data, dict):
            return data, None
        if event is Event.TOOL_CALL:
            name = tool_name_from_04(data.get("tool_name"), self.server_of, self.bundles)
            return {**data, "tool_name": name}, None
        if event is Event.GET_RESOURCES and isinstance(data.get("mcp_server"), str):
            server = self.bundles.server(data["mcp_server"])
            if server is None:
                return None, _not_found(data["mcp_server"])
            return {**data, "mcp_server": server}, None
        if event is Event.GET_SKILL and isinstance(data.get("name"), str):
            return self._skill_request(data)
        return translate_request(event.value, data, agent=LINE_0_4, computer=LINE_0_2), None

    def answer(self, event: Event, answer: Any, request: Any) -> Any:
        """Our answer to ``request`` (the 0.4 one, as received) in 0.4 shapes."""
        if not isinstance(answer, dict):
            return answer
        error = isinstance(answer.get("code"), int) and "message" in answer
        if event is Event.GET_TOOLS and "tools" in answer:
            return {**answer, "tools": tools_for_04(answer["tools"], self.server_of, self.bundles)}
        if event is Event.GET_CONFIG and not error:
            return config_02_to_04(self._config(answer))
        if event is Event.TOOL_CALL and isinstance(answer.get("meta"), dict):
            answer = {**answer, "meta": self._meta(answer["meta"])}
        elif event is Event.GET_RESOURCES and error and answer["code"] in _SERVER_ERRORS:
            answer = _naming(answer, request.get("mcp_server"))
        elif event is Event.GET_SKILLS and isinstance(answer.get("skills"), list):
            answer = {**answer, "skills": [self._skill(s) for s in answer["skills"]]}
        elif event is Event.GET_SKILL and isinstance(request.get("name"), str):
            answer = _skill_answer(answer, request["name"], error)
        return translate_answer(event.value, answer, agent=LINE_0_4, computer=LINE_0_2)

    # -------------------------------------------------------------------- parts

    def _config(self, answer: dict[str, Any]) -> dict[str, Any]:
        out = dict(answer)
        for field in ("servers", "a2c_server_states"):
            if isinstance(answer.get(field), dict):
                out[field] = {self.bundles.bundle(k): v for k, v in answer[field].items()}
        return out

    def _meta(self, meta: dict[str, Any]) -> dict[str, Any]:
        return {
            k: (self.bundles.bundle(v) if k in _SERVER_KEYS and isinstance(v, str) else v)
            for k, v in meta.items()
        }

    def _skill_request(self, data: dict[str, Any]) -> tuple[Any, Any]:
        name: str = data["name"]
        parts = name.split(":")
        if len(parts) != 3 or parts[0] != MCP_PREFIX or bundle_id_problem(parts[1]):
            return data, None  # not an MCP skill name, or a malformed one (4016 follows)
        server = self.bundles.server(parts[1])
        if server is None:  # our own segment of a server is not a bundle_id: unknown too
            error = SkillNotFoundError(f"no skill named {name!r} on this Computer", name=name)
            return None, translate_answer(
                Event.GET_SKILL.value, to_wire(error.to_payload()),
                agent=LINE_0_4, computer=LINE_0_2,
            )  # fmt: skip
        ours = ":".join([MCP_PREFIX, normalize_server_segment(server), parts[2]])
        return {**data, "name": ours}, None

    def _skill(self, skill: Any) -> Any:
        if not isinstance(skill, dict):
            return skill
        # Our segment is the key with odd characters made '_': two keys may share it, and
        # then the skill keeps the name it has (no guess at which server it came from).
        segments: dict[str, str | None] = {}
        for key, bundle in self.bundles.by_server.items():
            segment = normalize_server_segment(key)
            segments[segment] = None if segment in segments else bundle
        shown = dict(skill)
        for field in ("name", "source"):
            if isinstance(skill.get(field), str):
                shown[field] = _skill_name(skill[field], segments)
        return shown


def _skill_name(name: str, segments: Mapping[str, str | None]) -> str:
    """``mcp:<segment>[:<skill>]`` with its server segment swapped through ``segments``."""
    parts = name.split(":")
    if len(parts) not in (2, 3) or parts[0] != MCP_PREFIX:
        return name
    swapped = segments.get(parts[1])
    return name if swapped is None else ":".join([parts[0], swapped, *parts[2:]])


def _skill_answer(answer: dict[str, Any], asked: str, error: bool) -> dict[str, Any]:
    if not error:
        return {**answer, "name": asked} if "name" in answer else answer
    details = answer.get("details")
    if isinstance(details, dict) and "name" in details:
        return {**answer, "details": {**details, "name": asked}}
    return answer


def _naming(payload: dict[str, Any], bundle: Any) -> dict[str, Any]:
    """A 4014/4015 naming the bundle_id asked for (our handler named the server's key)."""
    if not isinstance(bundle, str):
        return payload
    out = {**payload, "mcp_server_name": bundle}
    details = payload.get("details")
    if isinstance(details, dict) and "mcp_server_name" in details:
        out["details"] = {**details, "mcp_server_name": bundle}
    return out


def _not_found(bundle: str) -> Any:
    error = McpServerNotFoundError(
        f"no MCP server has bundle_id {bundle!r} on this Computer", mcp_server_name=bundle
    )
    payload = to_wire(error.to_payload())
    return translate_answer(Event.GET_RESOURCES.value, payload, agent=LINE_0_4, computer=LINE_0_2)
