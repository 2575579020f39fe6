"""Skills (0.2.1+) and blobs: listing skills, reading one file, pulling bytes by chunk."""

from __future__ import annotations

from typing import Any, Final

import attrs

from ._fields import JsonObject, _opt

__all__ = [
    "DEFAULT_SKILL_REL_PATH",
    "A2CSkillRef",
    "GetBlobReq",
    "GetBlobRet",
    "GetSkillReq",
    "GetSkillRet",
    "GetSkillsReq",
    "GetSkillsRet",
]

# ------------------------------------------------------------- skills (0.2.1+)

#: The file ``client:get_skill`` reads when the request has no ``rel_path``.
DEFAULT_SKILL_REL_PATH: Final = "SKILL.md"


@attrs.frozen(kw_only=True)
class A2CSkillRef:
    """One installed skill, as listed by ``client:get_skills`` (spec delta §4.7).

    ``name`` is opaque to Agents: copy it verbatim into ``GetSkillReq.name`` and learn the
    origin from ``source``. ``path`` is a directory on the *Computer's* host (for Agent SDK
    use, never for the LLM, and not necessarily reachable from the Agent). The four
    required fields are always sent; consumers must not assume any optional one. Unknown
    keys from newer peers are ignored.
    """

    name: str
    source: str
    path: str
    description: str
    uri: str | None = _opt()
    license: str | None = _opt()
    compatibility: str | None = _opt()
    allowed_tools: list[str] | None = _opt()
    skill_metadata: JsonObject | None = _opt()
    version: str | None = _opt()


@attrs.frozen(kw_only=True)
class GetSkillsReq:
    """``client:get_skills`` request."""

    agent: str
    req_id: str
    computer: str


@attrs.frozen(kw_only=True)
class GetSkillsRet:
    """``client:get_skills`` answer: usable skills in discovery order (not sorted)."""

    skills: list[A2CSkillRef]
    req_id: str


@attrs.frozen(kw_only=True)
class GetSkillReq:
    """``client:get_skill`` request: one file of one skill package.

    ``rel_path`` is a POSIX path relative to the package root; absent means
    :data:`DEFAULT_SKILL_REL_PATH` (see :attr:`effective_rel_path`).
    """

    agent: str
    req_id: str
    computer: str
    name: str
    rel_path: str | None = _opt()

    @property
    def effective_rel_path(self) -> str:
        """``rel_path``, or ``"SKILL.md"`` when the request left it out."""
        return DEFAULT_SKILL_REL_PATH if self.rel_path is None else self.rel_path


def _one_carrier(instance: Any, attribute: Any, value: str | None) -> None:
    if (instance.body is None) == (value is None):
        raise ValueError("exactly one of body and blob_handle must be present")


@attrs.frozen(kw_only=True)
class GetSkillRet:
    """``client:get_skill`` answer.

    Exactly one of ``body`` (inline text) and ``blob_handle`` (pull the bytes with
    ``client:get_blob``) is set. ``total_size`` and ``sha256`` describe the resource
    bytes (for ``SKILL.md``: the text after its YAML frontmatter); ``mime_type`` comes
    from the deterministic table (:func:`a2c_protocol.mime_type_for`).
    """

    name: str
    rel_path: str
    mime_type: str
    total_size: int
    sha256: str
    req_id: str
    body: str | None = _opt()
    blob_handle: str | None = _opt(validator=_one_carrier)


@attrs.frozen(kw_only=True)
class GetBlobReq:
    """``client:get_blob`` request: one chunk of the resource behind ``blob_handle``.

    ``chunk_offset`` is an absolute byte offset (absent: 0); ``max_chunk_bytes`` is the
    Agent's suggestion in raw (not base64) bytes, clamped by the Computer.
    """

    agent: str
    req_id: str
    computer: str
    blob_handle: str
    chunk_offset: int | None = _opt()
    max_chunk_bytes: int | None = _opt()


@attrs.frozen(kw_only=True)
class GetBlobRet:
    """``client:get_blob`` answer: one chunk, base64 in ``blob``.

    ``total_size`` and ``sha256`` describe the whole resource and are identical in every
    chunk of one logical read (a change means the source was rewritten: restart at 0).
    ``eof`` is true exactly when ``chunk_offset`` + the decoded chunk length equals
    ``total_size``. The structure is open: unknown keys (``etag``, ...) are ignored.
    """

    blob_handle: str
    mime_type: str
    total_size: int
    sha256: str
    chunk_offset: int
    eof: bool
    blob: str
    req_id: str
