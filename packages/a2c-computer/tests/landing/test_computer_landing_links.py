"""Links planted in the landing dir are never followed, and the dir's
housekeeping: orphaned partial files and retention."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from a2c_computer._landing import PARTIAL_DIR

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and modes")

HOURS_AGO = time.time() - 3 * 3600


def victim_dir(tmp_path: Path) -> Path:
    """A directory outside the landing dir with two files 3 h old."""
    victim = tmp_path / "victim"
    victim.mkdir()
    for name in ("keep-1.txt", "keep-2.part"):
        (victim / name).write_text(name)
        os.utime(victim / name, (HOURS_AGO, HOURS_AGO))
    return victim


def landing_in(tmp_path: Path) -> Path:
    landing = tmp_path / "landing"
    landing.mkdir()
    return landing


async def test_the_start_sweep_never_follows_a_partial_dir_link(make_store: Any,
                                                                tmp_path: Path) -> None:  # fmt: skip
    victim, landing = victim_dir(tmp_path), landing_in(tmp_path)
    (landing / PARTIAL_DIR).symlink_to(victim)
    await make_store(landing_dir=landing, idle_timeout=60)
    assert sorted(p.name for p in victim.iterdir()) == ["keep-1.txt", "keep-2.part"]
    assert not (landing / PARTIAL_DIR).is_symlink()  # the link itself is removed


async def test_an_upload_never_writes_through_a_partial_dir_link(
    make_store: Any, send: Any, tmp_path: Path
) -> None:
    victim, landing = victim_dir(tmp_path), landing_in(tmp_path)
    store = await make_store(landing_dir=landing)
    (landing / PARTIAL_DIR).symlink_to(victim)  # planted after the start
    answer = await send(store, b"payload", name="x.bin")
    assert answer["code"] == 4019 and answer["details"]["reason"] == "io_error"
    assert str(tmp_path) not in answer["message"]
    await store.aclose()
    assert sorted(p.name for p in victim.iterdir()) == ["keep-1.txt", "keep-2.part"]
    assert sorted(p.name for p in landing.iterdir()) == [PARTIAL_DIR]  # the link, untouched


async def test_a_link_under_the_asked_name_is_not_written_through(
    make_store: Any, send: Any, tmp_path: Path
) -> None:
    victim, landing = victim_dir(tmp_path), landing_in(tmp_path)
    (landing / "f.bin").symlink_to(victim / "keep-1.txt")
    answer = await send(await make_store(landing_dir=landing), b"theirs", name="f.bin")
    assert answer["landing_path"] == str(landing.resolve() / "f-2.bin")
    assert (victim / "keep-1.txt").read_text() == "keep-1.txt"


async def test_a_partial_file_swapped_for_a_link_does_not_land(
    make_store: Any, chunk_of: Any, tmp_path: Path
) -> None:
    victim, landing = victim_dir(tmp_path), landing_in(tmp_path)
    store = await make_store(landing_dir=landing)
    data = b"abcdefgh"
    digest = hashlib.sha256(data).hexdigest()
    first = await store.put(chunk_of(data[:4], 0, total_size=8, sha256=digest, name_hint="f"))
    part = landing / PARTIAL_DIR / f"{first['upload_id']}.part"
    part.rename(tmp_path / "moved.part")
    part.symlink_to(victim / "keep-1.txt")  # someone swaps the partial file for a link
    answer = await store.put(chunk_of(data[4:], 4, uid=first["upload_id"], eof=True))
    assert answer["code"] == 4019 and answer["details"]["reason"] == "io_error"
    await store.aclose()
    assert [p.name for p in landing.iterdir()] == []  # nothing landed, no link to the victim
    assert (victim / "keep-1.txt").stat().st_nlink == 1
    assert store.budget.usage() == (0, 0)


async def test_old_partial_files_of_a_dead_run_are_swept_young_ones_kept(
    make_store: Any, tmp_path: Path
) -> None:
    landing = landing_in(tmp_path)
    partial = landing / PARTIAL_DIR
    partial.mkdir(mode=0o700)
    (partial / "old.part").write_bytes(b"x")
    os.utime(partial / "old.part", (HOURS_AGO, HOURS_AGO))
    (partial / "young.part").write_bytes(b"x")
    await make_store(landing_dir=landing, idle_timeout=60)
    assert [p.name for p in partial.iterdir()] == ["young.part"]


async def test_retention_removes_old_regular_files_only(make_store: Any, send: Any,
                                                       tmp_path: Path) -> None:  # fmt: skip
    victim, landing = victim_dir(tmp_path), landing_in(tmp_path)
    store = await make_store(landing_dir=landing, retention=3600)
    assert "landing_path" in await send(store, b"new", name="new.bin")
    for name in ("old.bin", "older.bin"):
        (landing / name).write_bytes(b"old")
        os.utime(landing / name, (HOURS_AGO, HOURS_AGO))
    (landing / "sub").mkdir()
    os.utime(landing / "sub", (HOURS_AGO, HOURS_AGO))
    (landing / "link").symlink_to(victim / "keep-1.txt")
    os.utime(landing / "link", (HOURS_AGO, HOURS_AGO), follow_symlinks=False)
    await store.maintain()
    assert sorted(p.name for p in landing.iterdir()) == ["link", "new.bin", "sub"]
    assert (victim / "keep-1.txt").exists()
    assert store.budget.usage()[1] == 3
