"""Interop: the 0.2.1 events through the real ``a2c-server`` between plain python-socketio peers.

Neither peer uses our SDKs: the Agent is what any 0.2.x implementation sends on the wire
(announcing ``a2c_version=0.2.2``, as a newer SDK would), the Computer a scripted
python-socketio client that answers the three new ``client:*`` events. The Server must relay
both directions unchanged: same keys in the same order, unknown keys, unicode and numbers
intact, flat ErrorPayloads untouched, and no reassembly of blob chunks.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import socketio

from a2c_testkit.triangle import server_process

NAMESPACE = "/smcp"

SKILLS = {
    "skills": [
        {"name": "mcp:doc_tools:pdf-fill", "source": "mcp:doc_tools",
         "path": "/home/ops/.a2c/skills/mcp/doc_tools/pdf-fill",
         "description": "Füllt PDF-Formulare — 表单", "uri": "skill://org.example.doctools/pdf-fill",
         "allowed_tools": ["pdf_read"], "skill_metadata": {"n": 1.5, "deep": {"x": [None, True]}},
         "version": "1.4.0", "from_a_future_sdk": {"k": "v"}},
        {"name": "log-triage", "source": "user", "path": "/p/log-triage", "description": "d"},
    ],
    "req_id": "s1",
    "zz_extension": 12345678901234567,
}  # fmt: skip
SKILL = {"name": "log-triage", "rel_path": "SKILL.md", "mime_type": "text/markdown",
         "total_size": 42, "sha256": "ab" * 32, "body": "# Log triage\r\nRun it.\n",
         "req_id": "k1"}  # fmt: skip
ERRORS = {
    "client:get_skill": {"code": 4017, "message": "Skill resource not accessible",
                         "details": {"reason": "a_reason_from_0.2.9", "rel_path": "../x"}},
    "client:get_blob": {"code": 4018, "message": "Blob not accessible",
                        "details": {"reason": "gone"}},
    "client:get_skills": {"code": 4014, "message": "Skill not found",
                          "details": {"name": "kit:gone"}},
}  # fmt: skip


def _chunk(req: dict[str, Any]) -> dict[str, Any]:
    offset = req.get("chunk_offset", 0)
    data = bytes(range(256))[offset : offset + req.get("max_chunk_bytes", 64)]
    return {"blob_handle": req["blob_handle"], "mime_type": "application/octet-stream",
            "total_size": 256, "sha256": "cd" * 32, "chunk_offset": offset,
            "eof": offset + len(data) == 256, "blob": base64.b64encode(data).decode(),
            "req_id": req["req_id"], "etag": "e1"}  # fmt: skip


@contextlib.asynccontextmanager
async def peer(url: str, role: str, name: str, office: str) -> AsyncIterator[socketio.AsyncClient]:
    sio = socketio.AsyncClient()
    notes: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    sio.notes = notes  # type: ignore[attr-defined]

    @sio.on("*", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
    async def anything(event: str, data: Any = None) -> None:
        await notes.put((event, data))

    await sio.connect(
        f"{url}?a2c_version=0.2.2",
        auth={"role": role},
        namespaces=[NAMESPACE],
        transports=["polling", "websocket"],
        wait_timeout=30,
    )
    try:
        joined = await sio.call(
            "server:join_office",
            {"role": role, "name": name, "office_id": office},
            namespace=NAMESPACE,
            timeout=30,
        )
        assert joined == (True, None), joined
        yield sio
    finally:
        await sio.disconnect()


async def test_a_plain_agent_reaches_a_plain_computer_through_the_server_unchanged(
    procs: Any,
) -> None:
    seen: list[tuple[str, Any]] = []
    fail = asyncio.Event()

    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        peer(server.url, "computer", "box", "o1") as computer,
    ):

        def handler(event: str) -> Any:
            async def answer(data: Any) -> Any:
                seen.append((event, data))
                if fail.is_set():
                    return ERRORS[event]
                if event == "client:get_skills":
                    return {**SKILLS, "req_id": data["req_id"]}
                if event == "client:get_skill":
                    return {**SKILL, "req_id": data["req_id"]}
                return _chunk(data)

            return answer

        for event in ("client:get_skills", "client:get_skill", "client:get_blob"):
            computer.on(event, handler(event), namespace=NAMESPACE)

        async with peer(server.url, "agent", "planner", "o1") as agent:

            async def ask(event: str, payload: dict[str, Any]) -> Any:
                return await agent.call(event, payload, namespace=NAMESPACE, timeout=30)

            base = {"agent": "planner", "computer": "box"}
            skills_req = {**base, "req_id": "s1", "x_future_field": ["é", 1.25]}
            skills = await ask("client:get_skills", skills_req)
            assert json.dumps(skills) == json.dumps(SKILLS)
            skill_req = {**base, "req_id": "k1", "name": "log-triage"}
            assert json.dumps(await ask("client:get_skill", skill_req)) == json.dumps(SKILL)

            # Chunks in flight at once, each its own request and answer.
            blob_reqs = [
                {**base, "req_id": f"b{i}", "blob_handle": "h~/+=", "chunk_offset": i * 64,
                 "max_chunk_bytes": 64}
                for i in range(4)
            ]  # fmt: skip
            chunks = await asyncio.gather(*(ask("client:get_blob", r) for r in blob_reqs))
            assert [c["chunk_offset"] for c in chunks] == [0, 64, 128, 192]
            assert [c["eof"] for c in chunks] == [False, False, False, True]
            assert all(
                json.dumps(c) == json.dumps(_chunk(r))
                for c, r in zip(chunks, blob_reqs, strict=True)
            )

            fail.set()
            for event, error in ERRORS.items():
                assert json.dumps(await ask(event, {**skill_req, "blob_handle": "h"})) == (
                    json.dumps(error)
                )

            # The Computer got the Agent's requests as sent (extra keys included).
            assert seen[0] == ("client:get_skills", skills_req)
            assert json.dumps(seen[0][1]) == json.dumps(skills_req)
            assert ("client:get_skill", skill_req) in seen

            # server:update_skills → notify:update_skills with the sender's name.
            await computer.emit("server:update_skills", {"computer": "box"}, namespace=NAMESPACE)
            note = await asyncio.wait_for(agent.notes.get(), 30)  # type: ignore[attr-defined]
            assert note == ("notify:update_skills", {"computer": "box"})


async def test_a_0_2_0_computer_without_the_handlers_gives_a_404_not_a_hang(procs: Any) -> None:
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        peer(server.url, "computer", "old-box", "o1"),
        peer(server.url, "agent", "planner", "o1") as agent,
    ):
        answer = await agent.call(
            "client:get_skills",
            {"agent": "planner", "req_id": "r", "computer": "old-box"},
            namespace=NAMESPACE,
            timeout=30,
        )
        assert answer == {
            "code": 404,
            "message": "Computer 'old-box' does not implement client:get_skills",
            "details": {"event": "client:get_skills", "computer_name": "old-box"},
        }
        unknown = await agent.call(
            "client:get_everything", {"agent": "planner"}, namespace=NAMESPACE, timeout=30
        )
        assert isinstance(unknown, dict) and unknown["code"] == 400
        assert unknown["details"] == {"event": "client:get_everything"}
