"""The Agent's blob pull routine and result draining, over an in-memory chunk source."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
from typing import Any

import pytest

from a2c_agent import (
    BLOB_ERROR_KEY,
    BlobIntegrityError,
    BlobLimitError,
    BlobNotAccessibleError,
    CallToolResult,
    GetBlobRet,
    InvalidResponseError,
)
from a2c_agent._rpc._blobdrain import drain_result
from a2c_agent._rpc._blobpull import BlobData, pull_blob


class Source:
    """Serves ``data`` the way §5.4 says, with knobs to misbehave."""

    def __init__(self, data: bytes, *, cap: int = 1000, mime: str = "image/png") -> None:
        self.versions = [data]
        self.cap = cap
        self.mime = mime
        self.calls: list[tuple[int, int]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.change_after: int | None = None
        self.corrupt_reads = 0
        self.refuse: str | None = None
        self.range_once = False

    @property
    def data(self) -> bytes:
        return self.versions[-1]

    async def fetch(self, offset: int, size: int) -> GetBlobRet:
        self.calls.append((offset, size))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0)
            if self.refuse is not None:
                raise BlobNotAccessibleError(reason=self.refuse)
            if self.range_once:
                self.range_once = False
                raise BlobNotAccessibleError(reason="range")
            if self.change_after is not None and len(self.calls) > self.change_after:
                self.versions.append(os.urandom(len(self.data)))
                self.change_after = None
            data = self.data
            if offset < 0 or offset > len(data):
                raise BlobNotAccessibleError(reason="range")
            piece = data[offset : offset + min(size, self.cap)]
            digest = hashlib.sha256(data).hexdigest()
            if self.corrupt_reads and offset == 0:
                self.corrupt_reads -= 1
                piece = bytes([piece[0] ^ 1]) + piece[1:]
            return GetBlobRet(
                blob_handle="h",
                mime_type=self.mime,
                total_size=len(data),
                sha256=digest,
                chunk_offset=offset,
                eof=offset + len(piece) == len(data),
                blob=base64.b64encode(piece).decode(),
                req_id="r",
            )
        finally:
            self.in_flight -= 1


@pytest.mark.parametrize("size", [0, 1, 999, 1000, 1001, 25_000])
async def test_pull_reassembles_and_verifies(size: int) -> None:
    source = Source(os.urandom(size))
    seen: list[tuple[int, int]] = []
    blob = await pull_blob(
        source.fetch, chunk_bytes=4096, progress=lambda r, t: seen.append((r, t))
    )
    assert blob.data == source.data
    assert blob.sha256 == hashlib.sha256(source.data).hexdigest()
    assert blob.mime_type == "image/png"
    assert seen[-1] == (size, size)


async def test_pull_bounds_parallel_requests() -> None:
    source = Source(os.urandom(50_000), cap=1000)
    await pull_blob(source.fetch, chunk_bytes=1000, max_in_flight=3)
    assert source.max_in_flight <= 3
    assert source.max_in_flight > 1  # it did go parallel


async def test_pull_follows_a_computer_that_clamps_harder_than_the_first_chunk() -> None:
    source = Source(os.urandom(10_000), cap=1000)

    async def uneven(offset: int, size: int) -> GetBlobRet:
        source.cap = 1000 if offset == 0 else 300
        return await source.fetch(offset, size)

    blob = await pull_blob(uneven, chunk_bytes=1000)
    assert blob.data == source.data


async def test_pull_restarts_when_the_source_changes() -> None:
    source = Source(os.urandom(5000))
    source.change_after = 2
    blob = await pull_blob(source.fetch, max_in_flight=1)
    assert blob.data == source.versions[-1]
    assert len(source.versions) == 2


async def test_pull_restarts_after_a_corrupt_read_then_gives_up() -> None:
    source = Source(os.urandom(3000))
    source.corrupt_reads = 1
    assert (await pull_blob(source.fetch)).data == source.data
    source.corrupt_reads = 5
    with pytest.raises(BlobIntegrityError) as exc:
        await pull_blob(source.fetch, handle="h1", attempts=3)
    assert exc.value.expected == hashlib.sha256(source.data).hexdigest()
    assert exc.value.actual != exc.value.expected and exc.value.attempts == 3


async def test_pull_restarts_on_range() -> None:
    source = Source(os.urandom(3000))
    source.range_once = True
    assert (await pull_blob(source.fetch)).data == source.data


@pytest.mark.parametrize("reason", ["invalid_handle", "forbidden", "gone", "something_new"])
async def test_pull_raises_other_reasons_at_once(reason: str) -> None:
    source = Source(os.urandom(3000))
    source.refuse = reason
    with pytest.raises(BlobNotAccessibleError) as exc:
        await pull_blob(source.fetch)
    assert exc.value.reason == reason
    assert len(source.calls) == 1


async def test_pull_refuses_over_max_bytes_after_one_chunk() -> None:
    source = Source(os.urandom(5000))
    with pytest.raises(BlobLimitError):
        await pull_blob(source.fetch, max_bytes=4999)
    assert len(source.calls) == 1


@pytest.mark.parametrize(
    "bad",
    [
        {"blob": "!!!"},
        {"chunk_offset": 7},
        {"eof": True},
        {"total_size": 10},
    ],
)
async def test_pull_rejects_malformed_answers(bad: dict[str, Any]) -> None:
    source = Source(os.urandom(3000))

    async def broken(offset: int, size: int) -> GetBlobRet:
        import attrs

        return attrs.evolve(await source.fetch(offset, size), **bad)

    with pytest.raises(InvalidResponseError):
        await pull_blob(broken)


def sideband_item(handle: str, size: int) -> dict[str, Any]:
    return {
        "type": "image",
        "mimeType": "image/png",
        "data": "",
        "_meta": {"a2c_blob_handle": handle, "a2c_total_size": size, "a2c_sha256": "x"},
    }


async def test_drain_restores_items_keeps_keys_and_respects_the_limit() -> None:
    blobs = {"a": os.urandom(100), "b": os.urandom(200), "c": os.urandom(50)}

    async def pull(handle: str, limit: int | None) -> BlobData:
        if handle == "bad":
            raise BlobNotAccessibleError(reason="gone")
        data = blobs[handle]
        if limit is not None and len(data) > limit:
            raise BlobLimitError(len(data), limit)
        return BlobData(data=data, mime_type="image/png", sha256=hashlib.sha256(data).hexdigest())

    result = CallToolResult(
        content=[
            {"type": "text", "text": "hi"},
            sideband_item("a", 100),
            sideband_item("bad", 10),
            sideband_item("b", 200),
            sideband_item("c", 50),
            {
                "type": "resource",
                "resource": {"uri": "x://", "blob": ""},
                "_meta": {"a2c_blob_handle": "c", "a2c_total_size": 50},
            },
        ]
    )
    out = await drain_result(result, pull, max_bytes=200)
    text, a, bad, b, c, res = out.content
    assert text == result.content[0]
    assert base64.b64decode(a["data"]) == blobs["a"]
    assert a["_meta"]["a2c_blob_handle"] == "a"
    assert "gone" in bad["_meta"][BLOB_ERROR_KEY] and bad["data"] == ""
    assert "drain limit" in b["_meta"][BLOB_ERROR_KEY] and b["data"] == ""
    assert base64.b64decode(c["data"]) == blobs["c"]
    assert base64.b64decode(res["resource"]["blob"]) == blobs["c"]  # exactly 200 drained
    assert BLOB_ERROR_KEY not in res["_meta"]
    assert result.content[1]["data"] == ""  # input untouched


async def test_drain_without_sideband_returns_the_same_result() -> None:
    result = CallToolResult(content=[{"type": "text", "text": "hi"}])

    async def pull(handle: str, limit: int | None) -> BlobData:
        raise AssertionError("no pull expected")

    assert await drain_result(result, pull) is result
