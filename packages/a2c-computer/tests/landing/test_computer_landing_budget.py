"""The upload budget: blocks on disk and files, in all and per Agent (the rules, not the
speed: tools/bench/bench_landing.py measures that)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from a2c_computer._landing import LandingSettings
from a2c_computer._landing._budget import Budget, Entry


def entry(name: str, allocated: int, agent: str | None = None, ino: int = 1) -> Entry:
    return Entry(name=name, ino=ino, regular=True, size=1, allocated=allocated, mtime=0.0,
                 agent=agent)  # fmt: skip


def test_a_byte_costs_a_block_and_a_file() -> None:
    budget = Budget(LandingSettings(max_total_bytes=3 * 4096, max_files=100), block=4096)
    assert budget.charge(1) == 4096 and budget.charge(4097) == 8192
    for n in range(3):
        assert budget.refusal("bot", 1) is None
        budget.reserve(f"u{n}", "bot", 1)
    refusal = budget.refusal("bot", 1)
    assert refusal is not None and refusal.details["limit"] == "total_bytes"
    assert "12288 of 12288 bytes on disk" in refusal.message
    budget.release("u0")
    assert budget.refusal("bot", 1) is None


def test_files_are_counted_whatever_their_size() -> None:
    budget = Budget(LandingSettings(max_files=2))
    budget.replace({"a": entry("a", 0), "b": entry("b", 0, ino=2)}, 4096)  # empty files
    refusal = budget.refusal("bot", 1)
    assert refusal is not None and refusal.details == {"limit": "files", "used": 2, "max": 2,
                                                       "needed": 1}  # fmt: skip


def test_per_agent_limits_count_only_that_agents_files() -> None:
    settings = LandingSettings(agent_max_files=2, agent_max_bytes=10 * 4096)
    budget = Budget(settings)
    budget.replace({"a": entry("a", 4096, "greedy"), "b": entry("b", 4096, "greedy", 2),
                    "c": entry("c", 4096, None, 3)}, 4096)  # fmt: skip
    refusal = budget.refusal("greedy", 1)
    assert refusal is not None and refusal.details["limit"] == "agent_files"
    assert "'greedy' has landed 2 files" in refusal.message
    assert budget.refusal("modest", 1) is None
    refusal = budget.refusal("modest", 11 * 4096)
    assert refusal is not None and refusal.details["limit"] == "agent_bytes"
    assert budget.usage("greedy") == (8192, 2) and budget.usage() == (3 * 4096, 3)


def test_a_rescan_keeps_who_landed_a_file_it_cannot_read() -> None:
    budget = Budget(LandingSettings())
    budget.reserve("u", "bot", 1)
    budget.landed("u", entry("f", 4096, "bot", ino=7))
    # A file system without extended attributes: the scan says nobody; same inode -> bot.
    budget.replace({"f": entry("f", 4096, None, ino=7), "g": entry("g", 4096, None, 8)}, 4096)
    assert budget.usage("bot") == (4096, 1) and budget.usage() == (8192, 2)
    # Replaced by another file under the same name: not bot's any more.
    budget.replace({"f": entry("f", 4096, None, ino=9)}, 4096)
    assert budget.usage("bot") == (0, 0) and budget.usage() == (4096, 1)


async def test_one_byte_uploads_are_refused_once_their_blocks_fill_the_budget(
    make_store: Any, send: Any, tmp_path: Path
) -> None:
    block = os.statvfs(tmp_path).f_frsize
    store = await make_store(max_total_bytes=5 * block)
    landed = [await send(store, b"x", name="tiny") for _ in range(6)]
    assert all("landing_path" in a for a in landed[:5]), landed
    refused = landed[5]
    assert refused["code"] == 4019 and refused["details"]["reason"] == "too_large"
    assert refused["details"]["limit"] == "total_bytes"
    assert len(list(tmp_path.iterdir())) == 5
    on_disk = sum(p.lstat().st_blocks * 512 for p in tmp_path.iterdir())
    assert on_disk <= 5 * block


async def test_the_files_limit_and_room_made_by_removing_files(
    make_store: Any, send: Any, clock: Any, tmp_path: Path
) -> None:
    (tmp_path / "not-an-upload").mkdir()  # every entry takes an inode, a directory too
    store = await make_store(max_files=3)
    assert "landing_path" in await send(store, b"a", name="one")
    assert "landing_path" in await send(store, b"b", name="two")
    refused = await send(store, b"c", name="three")
    assert refused["details"] == {"reason": "too_large", "total_size": 1, "limit": "files",
                                  "used": 3, "max": 3, "needed": 1}  # fmt: skip
    assert "holds 3 files, its limit is 3" in refused["message"]
    # Someone removes a file: the next refusal for room counts the dir again first (at most
    # once a second) and finds the room.
    (tmp_path / "one").unlink()
    clock.now += 2
    assert "landing_path" in await send(store, b"c", name="three")


async def test_an_agents_quota_leaves_room_for_the_others(make_store: Any, send: Any) -> None:
    store = await make_store(agent_max_files=2)
    for n in range(2):
        assert "landing_path" in await send(store, b"x", name=f"g{n}", agent="greedy")
    refused = await send(store, b"x", name="g2", agent="greedy")
    assert refused["details"]["limit"] == "agent_files"
    assert "landing_path" in await send(store, b"x", name="m0", agent="modest")


async def test_who_landed_a_file_survives_a_restart(make_store: Any, send: Any,
                                                    tmp_path: Path) -> None:  # fmt: skip
    first = await make_store(agent_max_files=1)
    assert "landing_path" in await send(first, b"x", name="a", agent="greedy")
    await first.aclose()
    # A new Computer on the same dir reads who landed it (user.a2c.agent) and counts it.
    second = await make_store(agent_max_files=1)
    assert second.budget.usage("greedy")[1] == 1
    refused = await send(second, b"y", name="b", agent="greedy")
    assert refused["details"]["limit"] == "agent_files"
