"""The landing dir's rules (client:put_blob), driven through LandingStore alone."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2c_computer._landing import PARTIAL_DIR, LandingSettings, LandingStore, sanitize
from a2c_protocol import PutBlobReq


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def chunk(data: bytes, offset: int, *, uid: str | None = None, eof: bool = False,
          agent: str = "bot", **declared: Any) -> PutBlobReq:  # fmt: skip
    return PutBlobReq(agent=agent, req_id="r", computer="c", chunk_offset=offset, eof=eof,
                      blob=base64.b64encode(data).decode(), upload_id=uid, **declared)  # fmt: skip


def upload(store: LandingStore, data: bytes, name: str | None = "f.bin", size: int = 4) -> Any:
    digest = hashlib.sha256(data).hexdigest()
    parts = [data[i : i + size] for i in range(0, len(data), size)]
    uid = None
    answer: dict[str, Any] = {}
    for i, part in enumerate(parts):
        eof = i == len(parts) - 1
        declared = (
            {"total_size": len(data), "sha256": digest, "name_hint": name} if uid is None else {}
        )
        answer = store.put(chunk(part, i * size, uid=uid, eof=eof, **declared))
        if "code" in answer:
            return answer
        uid = answer["upload_id"]
    return answer


def store_in(tmp_path: Path, **kw: Any) -> LandingStore:
    return LandingStore(LandingSettings(landing_dir=tmp_path, **kw), clock=Clock())


def test_a_complete_upload_lands_byte_identical(tmp_path: Path) -> None:
    data = bytes(range(256)) * 3
    answer = upload(store_in(tmp_path), data, size=100)
    assert answer["landing_path"] == str(tmp_path.resolve() / "f.bin")
    assert answer["total_size"] == len(data)
    assert answer["sha256"] == hashlib.sha256(data).hexdigest()
    assert Path(answer["landing_path"]).read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin"]  # no partial dir left


def test_without_a_landing_dir_every_upload_is_forbidden(tmp_path: Path) -> None:
    answer = upload(LandingStore(LandingSettings()), b"abc")
    assert answer["code"] == 4019 and answer["details"]["reason"] == "forbidden"


def test_an_oversized_declaration_is_refused_before_a_byte_lands(tmp_path: Path) -> None:
    store = store_in(tmp_path, max_upload_bytes=10)
    req = chunk(b"x", 0, total_size=200 * 1024 * 1024, sha256="0" * 64)
    answer = store.put(req)
    assert answer["code"] == 4019 and answer["details"]["reason"] == "too_large"
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "old").write_bytes(b"x" * 8)
    full = store_in(tmp_path, max_total_bytes=10)
    assert upload(full, b"abcd")["details"]["reason"] == "too_large"  # 8 + 4 > 10


def test_names_stay_inside_and_never_overwrite(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    assert sanitize("../../etc/passwd") == "passwd"
    assert sanitize("..") == "upload" and sanitize(None) == "upload"
    assert sanitize(".bashrc") == "bashrc" and sanitize("a b$c.txt") == "a_b_c.txt"
    (tmp_path / "passwd").write_bytes(b"mine")
    answer = upload(store, b"theirs", name="../../passwd")
    assert answer["landing_path"] == str(tmp_path.resolve() / "passwd-2")
    assert (tmp_path / "passwd").read_bytes() == b"mine"


def test_a_wrong_digest_lands_nothing(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    first = store.put(chunk(b"abcd", 0, total_size=8, sha256="0" * 64, name_hint="f"))
    assert not (tmp_path / "f").exists()  # partial bytes never under the final name
    assert list((tmp_path / PARTIAL_DIR).iterdir())
    answer = store.put(chunk(b"efgh", 4, uid=first["upload_id"], eof=True))
    assert answer["details"]["reason"] == "integrity"
    assert list(tmp_path.iterdir()) == []


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
def test_a_bad_later_chunk_is_refused(tmp_path: Path, second: dict[str, Any], reason: str) -> None:
    store = store_in(tmp_path)
    digest = hashlib.sha256(b"abcdefgh").hexdigest()
    uid = store.put(chunk(b"abcd", 0, total_size=8, sha256=digest))["upload_id"]
    blob = second.pop("blob", None)
    req = chunk(second.pop("data", b"efgh"), second.pop("offset", 4), uid=uid,
                agent=second.pop("agent", "bot"), eof=second.pop("eof", False), **second)  # fmt: skip
    if blob is not None:
        req = attrs.evolve(req, blob=blob)
    answer = store.put(req)
    store.close()
    assert answer["code"] == 4019 and answer["details"]["reason"] == reason
    assert list(tmp_path.iterdir()) == []


def test_abandoned_uploads_are_reaped_and_leave_nothing(tmp_path: Path) -> None:
    clock = Clock()
    store = LandingStore(LandingSettings(landing_dir=tmp_path, idle_timeout=10), clock=clock)
    digest = hashlib.sha256(b"abcdefgh").hexdigest()
    uid = store.put(chunk(b"abcd", 0, total_size=8, sha256=digest))["upload_id"]
    store.put(chunk(b"ab", 0, agent="gone", total_size=4, sha256=digest))
    store.agent_left("gone")
    assert store.in_progress == 1
    clock.now += 11
    assert store.reap() == 1
    assert list(tmp_path.iterdir()) == []
    late = store.put(chunk(b"efgh", 4, uid=uid, eof=True))
    assert late["details"]["reason"] == "invalid_upload"


def test_busy_past_the_concurrency_limit(tmp_path: Path) -> None:
    store = store_in(tmp_path, max_concurrent=1)
    assert "upload_id" in store.put(chunk(b"ab", 0, total_size=4, sha256="0" * 64))
    answer = store.put(chunk(b"ab", 0, total_size=4, sha256="0" * 64))
    assert answer["details"]["reason"] == "busy"
    store.close()
    assert list(tmp_path.iterdir()) == []
