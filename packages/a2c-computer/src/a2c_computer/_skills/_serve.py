"""``client:get_skills`` and ``client:get_skill`` answers, as the Socket.IO link sends them."""

from __future__ import annotations

from typing import Any

from a2c_protocol import GetSkillReq, GetSkillsReq, GetSkillsRet, RemoteError, to_wire

from ._manager import SkillManager

__all__ = ["serve_get_skill", "serve_get_skills"]


def serve_get_skills(manager: SkillManager, req: GetSkillsReq) -> dict[str, Any]:
    """The usable skills, in discovery order."""
    answer: dict[str, Any] = to_wire(GetSkillsRet(skills=manager.skills(), req_id=req.req_id))
    return answer


async def serve_get_skill(manager: SkillManager, req: GetSkillReq) -> dict[str, Any]:
    """One file of one skill, or the flat 4014/4016/4017 ErrorPayload."""
    try:
        ret = await manager.read(req.name, req.rel_path, req.req_id)
    except RemoteError as exc:
        payload: dict[str, Any] = to_wire(exc.to_payload())
        return payload
    answer: dict[str, Any] = to_wire(ret)
    return answer
