"""The Computer's blob store, handle codec, sideband rewrite and answer sizing (no Server)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import time
from pathlib import Path

import mcp.types
import pytest

from a2c_computer import (
    BlobSettings,
    BlobStore,
    BlobTooLargeError,
    BlobUnavailableError,
    ComputerError,
)
from a2c_computer._blobs import HandleCodec
from a2c_computer._blobs._sideband import (
    ANSWER_MARGIN,
    chunk_budget,
    decoded_size,
    encoded_size,
    offload_binaries,
)
from a2c_computer._server_link._answers import fit_answer, tool_answer
from a2c_protocol import CallToolResult, to_wire

KEY = b"k" * 32


def make_store(tmp_path: Path, owner: str = "box-1", **settings: object) -> BlobStore:
    store = BlobStore(BlobSettings(spool_dir=tmp_path / owner, **settings), owner=owner)  # type: ignore[arg-type]
    store.open()
    return store


def reason_of(excinfo: pytest.ExceptionInfo[BlobUnavailableError]) -> str:
    return excinfo.value.reason


# -- handle codec ----------------------------------------------------------------


def test_codec_round_trips_and_refuses_every_alteration() -> None:
    codec = HandleCodec(KEY, "box-1")
    handle = codec.mint("spool", b"payload-bytes")
    assert codec.open(handle) == ("spool", b"payload-bytes")
    for i in range(len("a2cb1."), len(handle)):
        flipped = handle[:i] + ("A" if handle[i] != "A" else "B") + handle[i + 1 :]
        assert codec.open(flipped) is None, flipped
    assert codec.open(handle[:-1]) is None
    assert codec.open(handle + "A") is None
    assert codec.open("") is None
    assert codec.open(123) is None
    assert codec.open("a2cb1." + "!" * 40) is None
    assert codec.open("x" * 10_000) is None


def test_codec_binds_handles_to_owner_and_key() -> None:
    handle = HandleCodec(KEY, "box-1").mint("spool", b"p")
    assert HandleCodec(KEY, "box-2").open(handle) is None
    assert HandleCodec(b"q" * 32, "box-1").open(handle) is None


# -- spool store -------------------------------------------------------------------


def test_store_directory_is_private_locked_and_removed_on_close(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    mode = stat.S_IMODE(store.directory.stat().st_mode)
    assert mode == 0o700
    info = store.put_bytes(b"hello" * 1000, "text/plain")
    chunk = store.read_chunk(info.handle, 0, 10)
    assert chunk.data == b"hellohello"
    assert chunk.sha256 == hashlib.sha256(b"hello" * 1000).hexdigest()
    # A second Computer on the same spool would share its key and files: refused.
    with pytest.raises(ComputerError, match=r"in use by another Computer \(pid \d+\)"):
        make_store(tmp_path)
    store.close()
    store.close()  # idempotent
    assert not (tmp_path / "box-1").exists()  # nothing left behind
    again = make_store(tmp_path)  # the next Computer starts afresh: old handles are gone
    with pytest.raises(BlobUnavailableError):
        again.read_chunk(info.handle, 0, 10)
    again.close()


def test_a_close_leaves_foreign_files_of_a_given_spool_alone(tmp_path: Path) -> None:
    (tmp_path / "box-1").mkdir(mode=0o700)
    (tmp_path / "box-1" / "notes.txt").write_text("mine")
    store = make_store(tmp_path)
    store.put_bytes(b"x" * 100, "text/plain")
    store.close()
    assert sorted(p.name for p in (tmp_path / "box-1").iterdir()) == ["notes.txt"]


def test_default_spools_are_per_process_and_dead_ones_are_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first, second = BlobStore(owner="box"), BlobStore(owner="box")
    first.open()
    second.open()  # same name, same process: still two spools, two keys
    assert first.directory != second.directory
    handle = first.put_bytes(b"a" * 10, "text/plain").handle
    with pytest.raises(BlobUnavailableError):
        second.read_chunk(handle, 0, 1)
    # A Computer that died without closing: its lock is free, the next start removes it.
    dead = first.directory.parent / "box-1-99999999-abcdef"
    (dead / "data").mkdir(parents=True)
    (dead / ".lock").write_text("99999999")
    third = BlobStore(owner="box")
    third.open()
    assert not dead.exists()
    for store in (first, second, third):
        store.close()
    assert list(first.directory.parent.iterdir()) == []


def test_store_loosened_directory_is_tightened(tmp_path: Path) -> None:
    (tmp_path / "box-1").mkdir(mode=0o755)
    os.chmod(tmp_path / "box-1", 0o755)
    store = make_store(tmp_path)
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700


def test_a_spool_that_is_a_symlink_is_refused_and_its_target_left_alone(tmp_path: Path) -> None:
    # The sweep deletes files in the spool: a spool pointing elsewhere would let it
    # delete files outside the Computer's own area.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "victim.tmp").write_bytes(b"not the Computer's")
    (tmp_path / "box-1").symlink_to(elsewhere)
    with pytest.raises(ComputerError, match="not a plain directory"):
        make_store(tmp_path)
    assert (elsewhere / "victim.tmp").read_bytes() == b"not the Computer's"


def test_store_default_directory_is_under_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = BlobStore(owner="box/1")
    store.open()
    assert store.directory.is_relative_to(tmp_path / "cache" / "a2c-computer" / "blobs")
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cache" / "a2c-computer").stat().st_mode) == 0o700


def test_chunks_by_absolute_offset_and_eof(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    data = os.urandom(1000)
    info = store.put_bytes(data, "application/octet-stream")
    assert (info.size, info.sha256) == (1000, hashlib.sha256(data).hexdigest())
    parts = [store.read_chunk(info.handle, off, 300) for off in (0, 300, 600, 900)]
    assert b"".join(p.data for p in parts) == data
    assert [p.eof for p in parts] == [False, False, False, True]
    end = store.read_chunk(info.handle, 1000, 300)
    assert (end.data, end.eof) == (b"", True)
    with pytest.raises(BlobUnavailableError) as exc:
        store.read_chunk(info.handle, 1001, 300)
    assert reason_of(exc) == "range"
    with pytest.raises(BlobUnavailableError) as exc:
        store.read_chunk(info.handle, -1, 300)
    assert reason_of(exc) == "range"


def test_empty_blob_is_one_eof_chunk(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    info = store.put_bytes(b"", "image/png")
    chunk = store.read_chunk(info.handle, 0, 100)
    assert (chunk.size, chunk.data, chunk.eof) == (0, b"", True)


def test_foreign_forged_and_deleted(tmp_path: Path) -> None:
    mine, other = make_store(tmp_path, "box-1"), make_store(tmp_path, "box-2")
    theirs = other.put_bytes(b"x" * 100, "image/png")
    for bad in (theirs.handle, "a2cb1.AAAA", "not-a-handle", ""):
        with pytest.raises(BlobUnavailableError) as exc:
            mine.read_chunk(bad, 0, 10)
        assert reason_of(exc) == "invalid_handle"
    info = mine.put_bytes(b"y" * 100, "image/png")
    (mine.directory / "data" / info.sha256).unlink()
    with pytest.raises(BlobUnavailableError) as exc:
        mine.read_chunk(info.handle, 0, 10)
    assert reason_of(exc) == "gone"


def test_truncated_file_is_gone(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    info = store.put_bytes(b"z" * 100, "image/png")
    path = store.directory / "data" / info.sha256
    os.chmod(path, 0o600)
    path.write_bytes(b"z" * 50)
    with pytest.raises(BlobUnavailableError) as exc:
        store.read_chunk(info.handle, 0, 10)
    assert reason_of(exc) == "gone"


def test_ttl_expiry_and_sweep(tmp_path: Path) -> None:
    store = make_store(tmp_path, ttl=60.0)
    old = store.put_bytes(b"old" * 10, "text/plain")
    new = store.put_bytes(b"new" * 10, "text/plain")
    past = time.time() - 120
    os.utime(store.directory / "data" / old.sha256, (past, past))
    with pytest.raises(BlobUnavailableError) as exc:
        store.read_chunk(old.handle, 0, 5)
    assert reason_of(exc) == "gone"
    assert store.sweep() == 1
    assert store.usage().files == 1
    assert store.read_chunk(new.handle, 0, 3).data == b"new"
    assert store.sweep(now=time.time() + 61) == 1
    assert store.usage().files == 0


def test_reput_restarts_ttl(tmp_path: Path) -> None:
    store = make_store(tmp_path, ttl=60.0)
    info = store.put_bytes(b"same", "text/plain")
    past = time.time() - 120
    os.utime(store.directory / "data" / info.sha256, (past, past))
    again = store.put_bytes(b"same", "text/plain")
    assert store.read_chunk(again.handle, 0, 4).data == b"same"


def test_open_removes_stale_temporary_files(tmp_path: Path) -> None:
    # Left in a given spool by a Computer that crashed mid-write.
    (tmp_path / "box-1" / "data").mkdir(parents=True)
    (tmp_path / "box-1" / "data" / ".tmp-deadbeef").write_bytes(b"partial")
    store = make_store(tmp_path)
    assert not (store.directory / "data" / ".tmp-deadbeef").exists()


def test_capacity_evicts_oldest_and_never_exceeds(tmp_path: Path) -> None:
    store = make_store(tmp_path, spool_max_bytes=3000)
    infos = []
    for i in range(10):
        infos.append(store.put_bytes(bytes([i]) * 1000, "image/png"))
        past = time.time() - 1000 + i  # keep insertion order visible in mtimes
        os.utime(store.directory / "data" / infos[-1].sha256, (past, past))
        assert store.usage().bytes <= 3000
    with pytest.raises(BlobUnavailableError):
        store.read_chunk(infos[0].handle, 0, 1)
    assert store.read_chunk(infos[-1].handle, 0, 1).data == bytes([9])


def test_absolute_cap_and_capacity_refuse(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_blob_bytes=100, spool_max_bytes=1000)
    with pytest.raises(BlobTooLargeError) as exc:
        store.put_bytes(b"a" * 101, "image/png")
    assert (exc.value.size, exc.value.limit) == (101, 100)
    store2 = make_store(tmp_path, "box-2", max_blob_bytes=10_000, spool_max_bytes=1000)
    with pytest.raises(BlobTooLargeError):
        store2.put_bytes(b"a" * 1001, "image/png")
    assert store.usage().files == 0


def test_put_file_and_registered_kind(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    source = tmp_path / "asset.bin"
    source.write_bytes(b"abc" * 5000)
    info = store.put_file(source, "application/octet-stream")
    assert info.sha256 == hashlib.sha256(b"abc" * 5000).hexdigest()
    assert store.read_chunk(info.handle, 3, 3).data == b"abc"

    from a2c_computer import BlobSource

    allowed = {"ok": True}

    def resolve(payload: bytes) -> BlobSource:
        if not allowed["ok"]:
            raise BlobUnavailableError("forbidden")
        data = payload * 3
        return BlobSource(
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            mime_type="text/markdown",
            read=lambda off, n: data[off : off + n],
        )

    store.register_kind("skill", resolve)
    handle = store.mint("skill", b"ab")
    assert store.read_chunk(handle, 0, 100).data == b"ababab"
    allowed["ok"] = False
    with pytest.raises(BlobUnavailableError) as exc:
        store.read_chunk(handle, 0, 100)
    assert reason_of(exc) == "forbidden"
    with pytest.raises(ValueError):
        store.mint("unregistered", b"x")


# -- sideband and answer size ----------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_decoded_size_matches_b64decode() -> None:
    for n in range(20):
        assert decoded_size(b64(b"x" * n)) == n


def test_offload_moves_only_large_binary_items(tmp_path: Path) -> None:
    store = make_store(tmp_path, inline_budget=100)
    big, small = os.urandom(5000), os.urandom(100)
    result = CallToolResult(
        content=[
            {"type": "text", "text": "t" * 10_000},
            {"type": "image", "mimeType": "image/png", "data": b64(big)},
            {"type": "image", "mimeType": "image/png", "data": b64(small)},
            {"type": "audio", "mimeType": "audio/wav", "data": b64(big), "_meta": {"keep": 1}},
            {
                "type": "resource",
                "resource": {"uri": "file:///a", "mimeType": "application/pdf", "blob": b64(big)},
            },
            {"type": "image", "mimeType": "image/png", "data": "!!not base64!!" * 100},
        ]
    )
    out = offload_binaries(result, store.settings.inline_budget, store.put_bytes)
    text, image, tiny, audio, resource, broken = out.content
    assert text == result.content[0] and tiny == result.content[2] and broken == result.content[5]
    for item in (image, audio, resource):
        meta = item["_meta"]
        assert meta["a2c_total_size"] == 5000
        assert meta["a2c_sha256"] == hashlib.sha256(big).hexdigest()
        chunk = store.read_chunk(meta["a2c_blob_handle"], 0, 10_000)
        assert chunk.data == big
    assert image["data"] == "" and audio["data"] == "" and resource["resource"]["blob"] == ""
    assert audio["_meta"]["keep"] == 1
    assert "_meta" not in resource["resource"]
    assert store.read_chunk(image["_meta"]["a2c_blob_handle"], 0, 1).mime_type == "image/png"
    assert result.content[1]["data"] == b64(big)  # the input is not mutated
    mcp.types.CallToolResult.model_validate(to_wire(out))  # still a valid MCP result


def test_a_tool_failure_stays_an_error_without_blob_keys(tmp_path: Path) -> None:
    store = make_store(tmp_path, inline_budget=100)
    failed = CallToolResult(content=[{"type": "text", "text": "boom " * 100}], is_error=True)
    out = offload_binaries(failed, store.settings.inline_budget, store.put_bytes)
    assert out.is_error is True
    assert "a2c_blob_handle" not in json.dumps(to_wire(out))
    mcp.types.CallToolResult.model_validate(to_wire(out))


def test_offload_leaves_small_results_identical(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    result = CallToolResult(content=[{"type": "text", "text": "hi"}])
    assert offload_binaries(result, 10, store.put_bytes) is result


def test_encoded_size_is_what_socketio_sends() -> None:
    data = {"text": "é" * 10, "n": [1, 2]}
    assert encoded_size(data) == len(json.dumps([data], separators=(",", ":")).encode())


def test_chunk_budget_fits_the_limit() -> None:
    for limit in (65_536, 1_000_000, 10_000_000):
        raw = chunk_budget(limit, envelope_bytes=500)
        assert 4 * ((raw + 2) // 3) + 500 <= limit - ANSWER_MARGIN


def test_tool_answer_sidebands_and_refuses_large_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = make_store(tmp_path)
    png = os.urandom(2_000_000)
    answer = tool_answer(
        CallToolResult(content=[{"type": "image", "mimeType": "image/png", "data": b64(png)}]),
        tool="shot",
        store=store,
    )
    assert answer["content"][0]["_meta"]["a2c_total_size"] == 2_000_000
    assert encoded_size(answer) < 1000
    caplog.set_level("WARNING")
    refused = tool_answer(
        CallToolResult(content=[{"type": "text", "text": "x" * 2_000_000}]), tool="cat", store=store
    )
    assert refused["isError"] is True
    meta = refused["meta"]
    assert meta["error_code"] == 4003 and meta["reason"] == "result_too_large"
    assert meta["size_bytes"] > 2_000_000 and meta["limit_bytes"] == 1_000_000 - ANSWER_MARGIN
    assert str(meta["size_bytes"]) in refused["content"][0]["text"]
    assert any("cat" in r.getMessage() and "2000" in r.getMessage() for r in caplog.records)


def test_tool_answer_over_absolute_cap_is_an_error_result(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_blob_bytes=1000, inline_budget=100)
    answer = tool_answer(
        CallToolResult(
            content=[{"type": "image", "mimeType": "image/png", "data": b64(b"a" * 2000)}]
        ),
        tool="shot",
        store=store,
    )
    assert answer["isError"] is True
    assert answer["meta"]["reason"] == "blob_too_large"
    assert answer["meta"]["size_bytes"] == 2000 and answer["meta"]["limit_bytes"] == 1000


def test_fit_answer_replaces_oversized_with_500() -> None:
    settings = BlobSettings(max_message_bytes=100_000)
    small: dict[str, list[str]] = {"tools": []}
    assert fit_answer("client:get_tools", small, settings) is small
    big = to_wire(CallToolResult(content=[{"type": "text", "text": "x" * 200_000}]))
    refused = fit_answer("client:get_tools", big, settings)
    assert refused["code"] == 500 and refused["details"]["reason"] == "result_too_large"


# -- client:get_blob answers -------------------------------------------------------


def get_blob(store: BlobStore, handle: str, **fields: object) -> dict[str, object]:
    from a2c_computer._blobs import serve_get_blob
    from a2c_protocol import GetBlobReq

    req = GetBlobReq(agent="a", req_id="r1", computer="box-1", blob_handle=handle, **fields)  # type: ignore[arg-type]
    return serve_get_blob(store, req)


def test_get_blob_answer_always_fits_the_message_limit(tmp_path: Path) -> None:
    store = make_store(tmp_path, max_message_bytes=65_536, chunk_bytes=1_000_000)
    data = os.urandom(500_000)
    info = store.put_bytes(data, "image/png")
    offset, parts = 0, []
    while True:
        answer = get_blob(store, info.handle, chunk_offset=offset, max_chunk_bytes=10**12)
        assert encoded_size(answer) <= 65_536 - ANSWER_MARGIN
        assert answer["sha256"] == info.sha256 and answer["total_size"] == 500_000
        piece = base64.b64decode(str(answer["blob"]))
        assert piece and answer["chunk_offset"] == offset
        parts.append(piece)
        offset += len(piece)
        if answer["eof"]:
            break
    assert b"".join(parts) == data and len(parts) > 10


def test_get_blob_refusals_are_flat_4018_payloads(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    info = store.put_bytes(b"q" * 100, "image/png")
    cases = {
        "invalid_handle": {"handle": "forged"},
        "range": {"handle": info.handle, "chunk_offset": 101},
    }
    for reason, fields in cases.items():
        handle = str(fields.pop("handle"))
        answer = get_blob(store, handle, **fields)
        assert answer == {
            "code": 4018,
            "message": answer["message"],
            "details": {"reason": reason},
        }
    default = get_blob(store, info.handle)
    assert default["eof"] is True and default["chunk_offset"] == 0
    assert get_blob(store, info.handle, max_chunk_bytes=0)["code"] == 400
