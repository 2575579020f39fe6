"""The skills and blobs of a Computer, as the Agent asks for them: thin requests around
:mod:`a2c_agent._skills` and :mod:`a2c_agent._rpc._blobpull`, held by ``AsyncAgent``.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from a2c_agent._core import new_req_id
from a2c_agent._skills import SkillFile, read_skill_file
from a2c_protocol import (
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

T = TypeVar("T")


class Ask(Protocol):
    """One acked request of a connected agent, its answer decoded (``AgentCore.ask``)."""

    async def __call__(self, event: Event, payload: Any, response: type[T]) -> T: ...


class ComputerFiles:
    """Skills and blobs of a Computer, over ``client:get_skill(s)`` and ``client:get_blob``."""

    __slots__ = ("_ask", "_chunk_bytes", "_max_in_flight", "_name")

    def __init__(
        self,
        ask: Ask,
        name: str,
        chunk_bytes: int,
        max_in_flight: int,
    ) -> None:
        self._ask, self._name = ask, name
        self._chunk_bytes, self._max_in_flight = chunk_bytes, max_in_flight

    async def get_skill(
        self, computer: str, name: str, rel_path: str, max_bytes: int | None
    ) -> SkillFile:
        """See :meth:`AsyncAgent.get_skill`."""

        async def ask(skill: str, path: str) -> GetSkillRet:
            request = GetSkillReq(
                agent=self._name, req_id=new_req_id(), computer=computer, name=skill, rel_path=path
            )
            return await self._ask(Event.GET_SKILL, request, GetSkillRet)

        async def pull(handle: str, limit: int | None) -> BlobData:
            return await self.read_blob(computer, handle, limit, None)

        return await read_skill_file(ask, pull, name, rel_path, max_bytes=max_bytes)

    async def fetch_skills(self, computer: str) -> list[A2CSkillRef]:
        ret = await self._ask(
            Event.GET_SKILLS,
            GetSkillsReq(agent=self._name, req_id=new_req_id(), computer=computer),
            GetSkillsRet,
        )
        return list(ret.skills)

    # ------------------------------------------------------------------ blobs

    async def get_blob(
        self, computer: str, handle: str, offset: int = 0, max_chunk_bytes: int | None = None
    ) -> GetBlobRet:
        """See :meth:`AsyncAgent.get_blob`."""
        request = GetBlobReq(
            agent=self._name,
            req_id=new_req_id(),
            computer=computer,
            blob_handle=handle,
            chunk_offset=offset,
            max_chunk_bytes=max_chunk_bytes,
        )
        return await self._ask(Event.GET_BLOB, request, GetBlobRet)

    async def read_blob(
        self, computer: str, handle: str, max_bytes: int | None, progress: ProgressFn | None
    ) -> BlobData:
        """See :meth:`AsyncAgent.read_blob`."""

        async def fetch(offset: int, size: int) -> GetBlobRet:
            return await self.get_blob(computer, handle, offset, size)

        return await pull_blob(
            fetch,
            handle=handle,
            chunk_bytes=self._chunk_bytes,
            max_in_flight=self._max_in_flight,
            max_bytes=max_bytes,
            progress=progress,
        )
