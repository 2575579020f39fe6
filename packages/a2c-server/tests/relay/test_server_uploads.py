"""``client:put_blob`` is relayed only between sessions that speak it (rules U0-U2)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from a2c_protocol import NAMESPACE, PUT_BLOB_EXTENSION, Event
from a2c_testkit.server import RawClient, RunningServer, connect_raw

UPLOADS: dict[str, object] = {"a2c_extensions": [PUT_BLOB_EXTENSION]}
CHUNK = {"agent": "alice", "req_id": "r1", "chunk_offset": 0, "eof": True, "blob": "aGk=",
         "total_size": 2, "sha256": "0" * 64}  # fmt: skip


async def joined(stack: AsyncExitStack, srv: RunningServer, role: str, name: str,
                 **kw: Any) -> RawClient:  # fmt: skip
    client = await stack.enter_async_context(connect_raw(srv, role, **kw))
    assert await client.join(role, name, "o1") == (True, None)
    return client


def recording(client: RawClient, seen: list[Any]) -> None:
    async def answer(data: Any) -> Any:
        seen.append(data)
        return {"upload_id": "u", "chunk_offset": 0, "req_id": data["req_id"],
                "landing_path": "/l/x", "total_size": 2, "sha256": "0" * 64}  # fmt: skip

    client.sio.on(Event.PUT_BLOB.value, answer, namespace=NAMESPACE)


async def test_uploads_reach_only_computers_that_speak_them(server: RunningServer) -> None:
    seen: dict[str, list[Any]] = {"old": [], "new": [], "v04": []}
    async with AsyncExitStack() as stack:
        alice = await joined(stack, server, "agent", "alice", auth=UPLOADS)
        computers = {
            "old": await joined(stack, server, "computer", "old"),
            "new": await joined(stack, server, "computer", "new", auth=UPLOADS),
            "v04": await joined(stack, server, "computer", "v04", a2c_version="0.4.2"),
        }
        for name, computer in computers.items():
            recording(computer, seen[name])
        refused = await alice.call(Event.PUT_BLOB, {**CHUNK, "computer": "old"})
        relayed = await alice.call(Event.PUT_BLOB, {**CHUNK, "computer": "new"})
        relayed_04 = await alice.call(Event.PUT_BLOB, {**CHUNK, "computer": "v04"})
    assert refused["code"] == 4019 and refused["details"]["reason"] == "forbidden"
    assert refused["details"]["computer_name"] == "old"
    assert relayed["landing_path"] == relayed_04["landing_path"] == "/l/x"
    assert seen["old"] == [] and len(seen["new"]) == len(seen["v04"]) == 1


async def test_an_agent_that_did_not_announce_uploads_is_refused(server: RunningServer) -> None:
    seen: list[Any] = []
    async with AsyncExitStack() as stack:
        alice = await joined(stack, server, "agent", "alice", auth={"a2c_extensions": "put_blob"})
        computer = await joined(stack, server, "computer", "new", auth=UPLOADS)
        recording(computer, seen)
        answer = await alice.call(Event.PUT_BLOB, {**CHUNK, "computer": "new"})
    assert answer["code"] == 4019 and answer["details"]["reason"] == "forbidden"
    assert "did not announce" in answer["message"] and seen == []
