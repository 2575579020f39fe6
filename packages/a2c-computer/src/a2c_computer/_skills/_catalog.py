"""The skill registry: the only map from a skill name to a package directory.

Rules (spec delta §4.2.4, §4.6, §4.9):

- Skills are grouped by *origin*: the user folder, or one MCP server (by its raw name).
  An origin's skills are replaced as a whole when it is (re)staged.
- Within one origin, a second skill with the same frontmatter ``name`` is refused (the
  first stays). Two MCP servers whose names normalize to the same segment: the server that
  registered first keeps the segment, the later one's skills are refused.
- An origin that goes offline is *orphaned*: its skills are hidden from listing and
  lookup, not forgotten, and come back when it returns.
- Listing is in discovery order: origins in the order they first registered, skills in
  the order their origin produced them.

Refusals are returned as messages for the log; they never reach the Agent.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from a2c_protocol import A2CSkillRef

from ._frontmatter import SkillFrontmatter
from ._names import (
    USER_SOURCE,
    mcp_skill_name,
    mcp_source,
    normalize_server_segment,
    server_segment_problem,
)

__all__ = ["USER_ORIGIN", "Skill", "SkillCatalog"]

#: The origin key of the user's skill folder (MCP origins use the raw server name).
USER_ORIGIN = ""


@attrs.frozen
class Skill:
    """One registered skill package."""

    name: str
    source: str
    root: Path
    front: SkillFrontmatter
    uri: str | None = None
    version: str | None = None

    @classmethod
    def from_user(cls, root: Path, front: SkillFrontmatter) -> Skill:
        """A skill of the user folder: named by its frontmatter ``name``."""
        return cls(
            name=front.name, source=USER_SOURCE, root=root, front=front, version=front.version
        )

    @classmethod
    def from_mcp(
        cls, server: str, root: Path, front: SkillFrontmatter, uri: str, version: str | None
    ) -> Skill:
        """A skill staged from MCP server ``server``: ``mcp:<segment>:<name>``."""
        return cls(
            name=mcp_skill_name(server, front.name),
            source=mcp_source(server),
            root=root,
            front=front,
            uri=uri,
            version=version or front.version,  # the resource's own version wins
        )

    def ref(self) -> A2CSkillRef:
        """The ``A2CSkillRef`` the Agent sees."""
        return A2CSkillRef(
            name=self.name,
            source=self.source,
            path=str(self.root),
            description=self.front.description,
            uri=self.uri,
            license=self.front.license,
            compatibility=self.front.compatibility,
            allowed_tools=list(self.front.allowed_tools) if self.front.allowed_tools else None,
            skill_metadata=self.front.metadata,
            version=self.version,
        )


class SkillCatalog:
    """Skills by origin, with orphan marks. Pure state: no I/O."""

    def __init__(self) -> None:
        self._origins: dict[str, list[Skill]] = {}
        self._orphans: set[str] = set()
        self._segments: dict[str, str] = {}  # normalized server segment -> raw server name

    def replace(self, origin: str, skills: list[Skill]) -> list[str]:
        """Set ``origin``'s skills (clearing its orphan mark); return refusal messages."""
        refusals: list[str] = []
        if origin != USER_ORIGIN:
            segment = normalize_server_segment(origin)
            unusable = server_segment_problem(segment)
            if unusable is not None:
                # Names under it would fail the lexer: listed, yet every read a 4016.
                self._origins.pop(origin, None)
                return (
                    [f"MCP server {origin!r}: {unusable}; its skills are refused"] if skills else []
                )
            owner = self._segments.setdefault(segment, origin)
            if owner != origin:
                self._origins.pop(origin, None)
                return [
                    f"MCP server {origin!r}: its name normalizes to {segment!r} like MCP server "
                    f"{owner!r}'s; its skills are refused"
                ]
        kept: list[Skill] = []
        seen: set[str] = set()
        for skill in skills:
            if skill.name in seen:
                refusals.append(
                    f"skill {skill.name!r} at {skill.root}: a skill of the same name came first"
                )
                continue
            seen.add(skill.name)
            kept.append(skill)
        self._origins[origin] = kept
        self._orphans.discard(origin)
        return refusals

    def forget(self, origin: str) -> None:
        """Drop ``origin`` entirely (e.g. an MCP server removed from the configuration)."""
        self._origins.pop(origin, None)
        self._orphans.discard(origin)
        for segment, owner in list(self._segments.items()):
            if owner == origin:
                del self._segments[segment]

    def orphan(self, origin: str) -> bool:
        """Hide ``origin``'s skills; True when that changed what is listed."""
        if origin not in self._origins or origin in self._orphans:
            return False
        self._orphans.add(origin)
        return bool(self._origins[origin])

    def unorphan(self, origin: str) -> None:
        """Show ``origin``'s skills again (its server is back with the same skills)."""
        self._orphans.discard(origin)

    def has(self, origin: str) -> bool:
        """Whether ``origin`` has been staged (orphaned or not)."""
        return origin in self._origins

    def usable(self) -> list[Skill]:
        """Every non-orphan skill, in discovery order."""
        return [
            skill
            for origin, skills in self._origins.items()
            if origin not in self._orphans
            for skill in skills
        ]

    def get(self, name: str) -> Skill | None:
        """The usable skill registered as exactly ``name``."""
        for skill in self.usable():
            if skill.name == name:
                return skill
        return None

    def refs(self) -> list[A2CSkillRef]:
        """``A2CSkillRef`` of every usable skill, in discovery order."""
        return [skill.ref() for skill in self.usable()]
