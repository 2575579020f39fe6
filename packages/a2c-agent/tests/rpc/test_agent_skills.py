"""The Agent's skills: reading files (inline and by handle, verified), typed errors, and the
skill cache kept current by notify:update_skills; through the real Server."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable

import pytest

from a2c_agent import (
    A2CSkillRef,
    AsyncAgent,
    BlobNotAccessibleError,
    Event,
    InvalidSkillNameError,
    SkillIntegrityError,
    SkillNotFoundError,
    SkillResourceError,
)
from a2c_agent._rpc._blobpull import BlobData
from a2c_agent._skills import read_skill_file
from a2c_protocol import GetSkillRet
from a2c_testkit.scripted_computer import ScriptedComputer
from a2c_testkit.scripted_skills import PNG, SKILLS, script_skills

OFFICE = "office-1"

MakeComputer = Callable[..., Awaitable[ScriptedComputer]]
MakeAgent = Callable[..., Awaitable[AsyncAgent]]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def inline(name: str, rel_path: str, text: str, *, digest: str | None = None) -> GetSkillRet:
    data = text.encode()
    return GetSkillRet(
        name=name,
        rel_path=rel_path,
        mime_type="text/markdown",
        total_size=len(data),
        sha256=digest or sha(data),
        req_id="r",
        body=text,
    )


def by_handle(name: str, rel_path: str, data: bytes, handle: str) -> GetSkillRet:
    return GetSkillRet(
        name=name,
        rel_path=rel_path,
        mime_type="image/png",
        total_size=len(data),
        sha256=sha(data),
        req_id="r",
        blob_handle=handle,
    )


# ---------------------------------------------------------------- pure reading


async def test_inline_body_is_verified() -> None:
    async def ask(name: str, rel_path: str) -> GetSkillRet:
        return inline(name, rel_path, "# Hi\nüber\n")

    async def pull(handle: str, limit: int | None) -> BlobData:
        raise AssertionError("no pull for inline bodies")

    got = await read_skill_file(ask, pull, "log-triage", "SKILL.md")
    assert got.text() == "# Hi\nüber\n" and got.is_text and got.size == len("# Hi\nüber\n".encode())


async def test_inline_body_with_a_wrong_digest_is_refused() -> None:
    async def ask(name: str, rel_path: str) -> GetSkillRet:
        return inline(name, rel_path, "# Hi\n", digest="0" * 64)

    async def pull(handle: str, limit: int | None) -> BlobData:
        raise AssertionError

    with pytest.raises(SkillIntegrityError) as info:
        await read_skill_file(ask, pull, "x", "SKILL.md")
    assert info.value.name == "x" and "0" * 64 in info.value.expected


async def test_handle_path_is_pulled_and_checked_against_the_skill_answer() -> None:
    async def ask(name: str, rel_path: str) -> GetSkillRet:
        return by_handle(name, rel_path, PNG, "h1")

    async def pull(handle: str, limit: int | None) -> BlobData:
        assert handle == "h1"
        return BlobData(data=PNG, mime_type="image/png", sha256=sha(PNG))

    got = await read_skill_file(ask, pull, "x", "assets/a.png")
    assert got.data == PNG and not got.is_text

    async def pull_other(handle: str, limit: int | None) -> BlobData:
        other = PNG[::-1]
        return BlobData(data=other, mime_type="image/png", sha256=sha(other))

    with pytest.raises(SkillIntegrityError):
        await read_skill_file(ask, pull_other, "x", "assets/a.png")


async def test_a_gone_handle_earns_exactly_one_fresh_get_skill() -> None:
    asked: list[str] = []

    async def ask(name: str, rel_path: str) -> GetSkillRet:
        asked.append(rel_path)
        return by_handle(name, rel_path, PNG, f"h{len(asked)}")

    async def pull_once_gone(handle: str, limit: int | None) -> BlobData:
        if handle == "h1":
            raise BlobNotAccessibleError(reason="gone")
        return BlobData(data=PNG, mime_type="image/png", sha256=sha(PNG))

    assert (await read_skill_file(ask, pull_once_gone, "x", "a.png")).data == PNG
    assert asked == ["a.png", "a.png"]

    asked.clear()

    async def pull_always_gone(handle: str, limit: int | None) -> BlobData:
        raise BlobNotAccessibleError(reason="gone")

    with pytest.raises(BlobNotAccessibleError):
        await read_skill_file(ask, pull_always_gone, "x", "a.png")
    assert len(asked) == 2


# ------------------------------------------------------------ through the Server


async def test_list_and_read_through_the_server(
    make_computer: MakeComputer, make_agent: MakeAgent
) -> None:
    computer = await make_computer()
    script_skills(computer, SKILLS)
    agent = await make_agent()
    await agent.join_office(OFFICE)

    skills = await agent.get_skills("box-1")
    assert [s.name for s in skills] == ["log-triage", "mcp:doc_tools:pdf-fill"]
    assert skills[0].version is None and skills[0].uri is None  # optional fields absent
    assert agent.skills["box-1"] == tuple(skills)

    md = await agent.get_skill("box-1", "mcp:doc_tools:pdf-fill")
    assert md.text() == "# mcp:doc_tools:pdf-fill\n"
    sent = computer.received(Event.GET_SKILL)[-1]
    assert sent["name"] == "mcp:doc_tools:pdf-fill" and sent["rel_path"] == "SKILL.md"

    png = await agent.get_skill("box-1", "log-triage", "assets/a.png")
    assert png.data == PNG and png.mime_type == "image/png"
    assert {p["blob_handle"] for p in computer.received(Event.GET_BLOB)} == {"handle-1"}


async def test_typed_errors(make_computer: MakeComputer, make_agent: MakeAgent) -> None:
    computer = await make_computer()
    script_skills(computer, SKILLS)
    agent = await make_agent()
    await agent.join_office(OFFICE)

    with pytest.raises(SkillNotFoundError) as missing:
        await agent.get_skill("box-1", "nope")
    assert missing.value.mcp_server_name is None
    assert missing.value.details == {"name": "nope"}
    with pytest.raises(InvalidSkillNameError):
        await agent.get_skill("box-1", "Bad:Name:x")
    with pytest.raises(SkillResourceError) as resource:
        await agent.get_skill("box-1", "log-triage", ".skillenv")
    assert resource.value.reason == "forbidden"


async def test_update_skills_refetches_into_the_cache(
    make_computer: MakeComputer, make_agent: MakeAgent
) -> None:
    computer = await make_computer()
    skills = list(SKILLS)
    script_skills(computer, skills)
    agent = await make_agent()
    await agent.join_office(OFFICE)
    seen: asyncio.Queue[tuple[str, tuple[A2CSkillRef, ...] | None]] = asyncio.Queue()
    agent.add_skills_listener(lambda c, s: seen.put_nowait((c, s)))

    await agent.get_skills("box-1")
    assert len((await seen.get())[1] or ()) == 2

    skills.pop()
    await computer.announce(Event.UPDATE_SKILLS)
    computer_name, fresh = await asyncio.wait_for(seen.get(), 30)
    assert computer_name == "box-1" and [s.name for s in fresh or ()] == ["log-triage"]
    assert [s.name for s in agent.skills["box-1"]] == ["log-triage"]

    await computer.leave()
    assert await asyncio.wait_for(seen.get(), 30) == ("box-1", None)
    assert "box-1" not in agent.skills
