"""The skills and blobs facades of the Agent: thin requests around
:mod:`a2c_agent._skills` and :mod:`a2c_agent._rpc._blobpull`.
"""

from __future__ import annotations

from collections.abc import Mapping

from a2c_agent._core import AgentCore, _req_id
from a2c_agent._skills import SkillFile, read_skill_file
from a2c_protocol import (
    DEFAULT_SKILL_REL_PATH,
    A2CSkillRef,
    Event,
    GetBlobReq,
    GetBlobRet,
    GetSkillReq,
    GetSkillRet,
    GetSkillsReq,
    GetSkillsRet,
)

from ._blobpull import BlobData, ProgressFn, pull_blob


class FacadesMixin(AgentCore):
    """Skills and blobs of a Computer, over ``client:get_skill(s)`` and ``client:get_blob``."""

    @property
    def skills(self) -> Mapping[str, tuple[A2CSkillRef, ...]]:
        """Computer name → its last fetched skills; refreshed on ``notify:update_skills``."""
        return self._skills.view()

    async def get_skills(self, computer: str) -> list[A2CSkillRef]:
        """The skills ``computer`` offers now, in its discovery order (also cached)."""
        return await self._skills.fetch(computer)

    async def get_skill(
        self,
        computer: str,
        name: str,
        rel_path: str = DEFAULT_SKILL_REL_PATH,
        *,
        max_bytes: int | None = None,
    ) -> SkillFile:
        """One file of skill ``name`` (copied from ``A2CSkillRef.name``), verified.

        Inline text and blob-handle answers both end as bytes checked against the answer's
        ``total_size`` and ``sha256`` (:class:`SkillIntegrityError` otherwise). Raises
        :class:`~a2c_protocol.InvalidSkillNameError` (4016),
        :class:`~a2c_protocol.SkillNotFoundError` (4014) and
        :class:`~a2c_protocol.SkillResourceError` (4017, ``reason``).
        """

        async def ask(skill: str, path: str) -> GetSkillRet:
            request = GetSkillReq(
                agent=self._name, req_id=_req_id(), computer=computer, name=skill, rel_path=path
            )
            return await self._ask(Event.GET_SKILL, request, GetSkillRet)

        async def pull(handle: str, limit: int | None) -> BlobData:
            return await self.read_blob(computer, handle, max_bytes=limit)

        return await read_skill_file(ask, pull, name, rel_path, max_bytes=max_bytes)

    async def _fetch_skills(self, computer: str) -> list[A2CSkillRef]:
        ret = await self._ask(
            Event.GET_SKILLS,
            GetSkillsReq(agent=self._name, req_id=_req_id(), computer=computer),
            GetSkillsRet,
        )
        return list(ret.skills)

    # ------------------------------------------------------------------ blobs

    async def get_blob(
        self,
        computer: str,
        handle: str,
        *,
        offset: int = 0,
        max_chunk_bytes: int | None = None,
    ) -> GetBlobRet:
        """One chunk of the blob behind ``handle`` (minted by ``computer``) at ``offset``.

        ``max_chunk_bytes`` is a suggestion in raw bytes; the Computer clamps it. Raises
        :class:`~a2c_protocol.BlobNotAccessibleError` (4018) with ``reason``
        ``invalid_handle``, ``forbidden``, ``gone`` or ``range``.
        """
        request = GetBlobReq(
            agent=self._name,
            req_id=_req_id(),
            computer=computer,
            blob_handle=handle,
            chunk_offset=offset,
            max_chunk_bytes=max_chunk_bytes,
        )
        return await self._ask(Event.GET_BLOB, request, GetBlobRet)

    async def read_blob(
        self,
        computer: str,
        handle: str,
        *,
        max_bytes: int | None = None,
        progress: ProgressFn | None = None,
    ) -> BlobData:
        """Every byte of the blob behind ``handle``, verified against its SHA-256.

        Chunks are fetched by absolute offset, ``blob_max_in_flight`` at a time. A source
        that changes during the read, a refused offset or a digest mismatch restarts the
        read from 0 (three reads at most, then :class:`BlobIntegrityError`); other 4018
        reasons raise :class:`~a2c_protocol.BlobNotAccessibleError` at once. ``max_bytes``
        refuses larger blobs with :class:`BlobLimitError`; ``progress(received, total)``
        is called after each chunk.
        """

        async def fetch(offset: int, size: int) -> GetBlobRet:
            return await self.get_blob(computer, handle, offset=offset, max_chunk_bytes=size)

        return await pull_blob(
            fetch,
            handle=handle,
            chunk_bytes=self._blob_chunk_bytes,
            max_in_flight=self._blob_max_in_flight,
            max_bytes=max_bytes,
            progress=progress,
        )
