"""The landing dir's rules (client:put_blob), driven through LandingStore alone."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2c_computer._exceptions import ConfigError
from a2c_computer._landing import PARTIAL_DIR, LandingSettings, LandingStore


async def test_a_complete_upload_lands_byte_identical(make_store: Any, send: Any,
                                                      tmp_path: Path) -> None:  # fmt: skip
    data = bytes(range(256)) * 3
    answer = await send(await make_store(), data, size=100)
    assert answer["landing_path"] == str(tmp_path.resolve() / "f.bin")
    assert answer["total_size"] == len(data)
    assert answer["sha256"] == hashlib.sha256(data).hexdigest()
    assert Path(answer["landing_path"]).read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin"]  # no partial dir left


async def test_without_a_landing_dir_every_upload_is_forbidden(make_store: Any,
                                                               send: Any) -> None:  # fmt: skip
    answer = await send(await make_store(landing_dir=None), b"abc")
    assert answer["code"] == 4019 and answer["details"]["reason"] == "forbidden"


async def test_a_missing_landing_dir_fails_the_start(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    store = LandingStore(LandingSettings(landing_dir=missing))
    with pytest.raises(ConfigError, match="does not exist"):
        await store.open()
    assert not missing.exists()  # never created
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is not a directory"):
        await LandingStore(LandingSettings(landing_dir=tmp_path / "file")).open()
    await store.aclose()


async def test_a_landing_dir_gone_later_names_no_local_path(make_store: Any, send: Any,
                                                            tmp_path: Path) -> None:  # fmt: skip
    landing = tmp_path / "secret-place"
    landing.mkdir()
    store = await make_store(landing_dir=landing)
    landing.rmdir()
    answer = await send(store, b"abcd")
    assert answer["code"] == 4019 and answer["details"]["reason"] == "forbidden"
    assert "secret-place" not in str(answer) and str(tmp_path) not in str(answer)
    # A store never opened (the Python API used without start) checks at the first upload.
    lazy = LandingStore(LandingSettings(landing_dir=landing))
    answer = await send(lazy, b"abcd")
    await lazy.aclose()
    assert answer["details"]["reason"] == "forbidden" and "secret-place" not in str(answer)


async def test_an_oversized_declaration_is_refused_before_a_byte_lands(
    make_store: Any, send: Any, chunk_of: Any, tmp_path: Path
) -> None:
    store = await make_store(max_upload_bytes=10)
    answer = await store.put(chunk_of(b"x", 0, total_size=200 * 1024 * 1024, sha256="0" * 64))
    assert answer["code"] == 4019 and answer["details"]["reason"] == "too_large"
    assert answer["details"]["limit"] == "upload_bytes"
    assert list(tmp_path.iterdir()) == []


async def test_names_stay_inside_and_never_overwrite(make_store: Any, send: Any,
                                                     tmp_path: Path) -> None:  # fmt: skip
    store = await make_store()
    (tmp_path / "passwd").write_bytes(b"mine")
    answer = await send(store, b"theirs", name="../../passwd")
    assert answer["landing_path"] == str(tmp_path.resolve() / "passwd-2")
    assert (tmp_path / "passwd").read_bytes() == b"mine"
    answer = await send(store, b"again", name="passwd")
    assert answer["landing_path"] == str(tmp_path.resolve() / "passwd-3")


async def test_many_uploads_of_one_name_take_a_bounded_number_of_tries(
    make_store: Any, send: Any, tmp_path: Path
) -> None:
    # Numbers 2..30 taken by someone else (or an earlier run): the store tries a few
    # numbers, then a random name, instead of walking the whole row.
    for number in range(2, 31):
        (tmp_path / f"r-{number}.txt").write_bytes(b"old")
    (tmp_path / "r.txt").write_bytes(b"old")
    store = await make_store()
    first = Path((await send(store, b"new1", name="r.txt"))["landing_path"]).name
    assert first.startswith("r-") and first.endswith(".txt") and len(first) == len("r-.txt") + 8
    int(first[2:-4], 16)  # eight hex digits
    # The next one starts past the numbers found taken.
    second = Path((await send(store, b"new2", name="r.txt"))["landing_path"]).name
    assert second != first and (tmp_path / second).read_bytes() == b"new2"


async def test_a_wrong_digest_lands_nothing(make_store: Any, chunk_of: Any,
                                            tmp_path: Path) -> None:  # fmt: skip
    store = await make_store()
    first = await store.put(chunk_of(b"abcd", 0, total_size=8, sha256="0" * 64, name_hint="f"))
    assert not (tmp_path / "f").exists()  # partial bytes never under the final name
    assert list((tmp_path / PARTIAL_DIR).iterdir())
    answer = await store.put(chunk_of(b"efgh", 4, uid=first["upload_id"], eof=True))
    assert answer["details"]["reason"] == "integrity"
    await store.aclose()  # the worker has run every step: the partial dir is gone
    assert list(tmp_path.iterdir()) == []
    assert store.budget.usage() == (0, 0)


@pytest.mark.parametrize(
    ("second", "reason"),
    [
        ({"offset": 3}, "range"),
        ({"agent": "other"}, "invalid_upload"),
        ({"total_size": 8}, "invalid_declaration"),
        ({"blob": "***"}, "invalid_declaration"),
        ({"eof": True, "data": b"ef"}, "range"),
    ],
)
async def test_a_bad_later_chunk_is_refused(make_store: Any, chunk_of: Any, tmp_path: Path,
                                            second: dict[str, Any], reason: str) -> None:  # fmt: skip
    store = await make_store()
    digest = hashlib.sha256(b"abcdefgh").hexdigest()
    uid = (await store.put(chunk_of(b"abcd", 0, total_size=8, sha256=digest)))["upload_id"]
    blob = second.pop("blob", None)
    req = chunk_of(second.pop("data", b"efgh"), second.pop("offset", 4), uid=uid,
                   agent=second.pop("agent", "bot"), eof=second.pop("eof", False), **second)  # fmt: skip
    if blob is not None:
        req = attrs.evolve(req, blob=blob)
    answer = await store.put(req)
    await store.aclose()
    assert answer["code"] == 4019 and answer["details"]["reason"] == reason
    assert list(tmp_path.iterdir()) == []


async def test_abandoned_uploads_are_reaped_and_leave_nothing(
    make_store: Any, chunk_of: Any, clock: Any, tmp_path: Path
) -> None:
    store = await make_store(idle_timeout=10)
    digest = hashlib.sha256(b"abcdefgh").hexdigest()
    uid = (await store.put(chunk_of(b"abcd", 0, total_size=8, sha256=digest)))["upload_id"]
    await store.put(chunk_of(b"ab", 0, agent="gone", total_size=4, sha256=digest))
    store.agent_left("gone")
    assert store.in_progress == 1
    clock.now += 11
    assert store.reap() == 1
    late = await store.put(chunk_of(b"efgh", 4, uid=uid, eof=True))
    assert late["details"]["reason"] == "invalid_upload"
    await store.aclose()
    assert list(tmp_path.iterdir()) == []
    assert store.budget.usage() == (0, 0)  # reservations released


async def test_busy_past_the_concurrency_limit(make_store: Any, chunk_of: Any,
                                               tmp_path: Path) -> None:  # fmt: skip
    store = await make_store(max_concurrent=1)
    assert "upload_id" in await store.put(chunk_of(b"ab", 0, total_size=4, sha256="0" * 64))
    answer = await store.put(chunk_of(b"ab", 0, total_size=4, sha256="0" * 64))
    assert answer["details"]["reason"] == "busy"
    await store.aclose()
    assert list(tmp_path.iterdir()) == []


async def test_chunks_sent_without_waiting_land_in_order(make_store: Any, chunk_of: Any,
                                                         tmp_path: Path) -> None:  # fmt: skip
    # A peer may send the next chunk before the ack of the previous one: the writes queue
    # in order in the worker, each checked against the bytes accepted before it.
    store = await make_store()
    data = bytes(range(200)) * 50
    digest = hashlib.sha256(data).hexdigest()
    first = await store.put(chunk_of(data[:1000], 0, total_size=len(data), sha256=digest,
                                     name_hint="p.bin"))  # fmt: skip
    uid = first["upload_id"]
    rest = [
        store.put(chunk_of(data[o : o + 1000], o, uid=uid, eof=o + 1000 >= len(data)))
        for o in range(1000, len(data), 1000)
    ]
    answers = await asyncio.gather(*rest)
    assert all("code" not in a for a in answers), answers
    assert (tmp_path / "p.bin").read_bytes() == data
