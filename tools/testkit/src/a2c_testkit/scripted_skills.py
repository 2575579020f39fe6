"""Skill answers for a :class:`~a2c_testkit.scripted_computer.ScriptedComputer`.

``script_skills(computer, skills)`` makes it answer ``client:get_skills`` with ``skills``
(a list the test may change later), ``client:get_skill`` with a one-line ``SKILL.md`` body
(4016 for ``Bad:Name:x``, 4014 for unknown names, 4017 ``forbidden`` for ``.skillenv``) and
``assets/a.png`` by blob handle, and ``client:get_blob`` with that PNG in 500-byte chunks.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from a2c_protocol import Event

from .scripted_computer import ScriptedComputer

__all__ = ["PNG", "SKILLS", "script_skills"]

#: The binary asset (1280 bytes).
PNG = bytes(range(256)) * 5

SKILLS: list[dict[str, Any]] = [
    {"name": "log-triage", "source": "user", "path": "/srv/skills/log-triage", "description": "d"},
    {
        "name": "mcp:doc_tools:pdf-fill",
        "source": "mcp:doc_tools",
        "path": "/srv/skills/mcp/doc_tools/pdf-fill",
        "description": "Fill PDF forms.",
        "uri": "skill://org.example/pdf-fill",
        "version": None,
    },
]


def script_skills(computer: ScriptedComputer, skills: list[dict[str, Any]]) -> None:
    def get_skills(payload: dict[str, Any]) -> dict[str, Any]:
        return {"skills": list(skills), "req_id": payload["req_id"]}

    def get_skill(payload: dict[str, Any]) -> dict[str, Any]:
        name, rel = payload["name"], payload.get("rel_path", "SKILL.md")
        if name == "Bad:Name:x":
            return {"code": 4016, "message": "invalid skill name"}
        if name not in {s["name"] for s in skills}:
            return {"code": 4014, "message": "Skill not found", "details": {"name": name}}
        if rel == ".skillenv":
            return {"code": 4017, "message": "forbidden", "details": {"reason": "forbidden"}}
        if rel == "assets/a.png":
            return {
                "name": name,
                "rel_path": rel,
                "mime_type": "image/png",
                "total_size": len(PNG),
                "sha256": _sha(PNG),
                "blob_handle": "handle-1",
                "req_id": payload["req_id"],
            }
        body = f"# {name}\n"
        return {
            "name": name,
            "rel_path": rel,
            "mime_type": "text/markdown",
            "total_size": len(body.encode()),
            "sha256": _sha(body.encode()),
            "body": body,
            "req_id": payload["req_id"],
        }

    def get_blob(payload: dict[str, Any]) -> dict[str, Any]:
        offset = payload.get("chunk_offset") or 0
        piece = PNG[offset : offset + 500]
        return {
            "blob_handle": payload["blob_handle"],
            "mime_type": "image/png",
            "total_size": len(PNG),
            "sha256": _sha(PNG),
            "chunk_offset": offset,
            "eof": offset + len(piece) == len(PNG),
            "blob": base64.b64encode(piece).decode(),
            "req_id": payload["req_id"],
        }

    computer.on(Event.GET_SKILLS, get_skills)
    computer.on(Event.GET_SKILL, get_skill)
    computer.on(Event.GET_BLOB, get_blob)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
