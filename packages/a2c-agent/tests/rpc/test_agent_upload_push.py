"""push_blob, the upload's pure logic, driven by a send function standing in for the link."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2c_agent import InvalidResponseError
from a2c_agent._upload._push import Declaration, push_blob
from a2c_protocol import PutBlobRet


class Receiver:
    """Keeps what was sent and answers like a Computer would (or with ``lie`` in the end)."""

    def __init__(self, lie: dict[str, Any] | None = None) -> None:
        self.data = b""
        self.declared: list[Declaration | None] = []
        self.lie = lie or {}

    async def __call__(self, uid: str | None, offset: int, eof: bool, chunk: bytes,
                       declared: Declaration | None) -> PutBlobRet:  # fmt: skip
        assert offset == len(self.data) and (uid is None) == (declared is not None)
        self.declared.append(declared)
        self.data += chunk
        if not eof:
            return PutBlobRet(upload_id="u1", chunk_offset=offset, req_id="r")
        fields = {"landing_path": "/l/f", "total_size": len(self.data),
                  "sha256": hashlib.sha256(self.data).hexdigest(), **self.lie}  # fmt: skip
        return PutBlobRet(upload_id="u1", chunk_offset=offset, req_id="r", **fields)


async def test_an_async_stream_is_declared_then_sent_in_order() -> None:
    async def stream() -> AsyncIterator[bytes]:
        for part in (b"abc", b"defg", b"h"):
            yield part

    seen: list[tuple[int, int]] = []
    receiver = Receiver()
    landed = await push_blob(receiver, stream(), chunk_bytes=3,
                             progress=lambda sent, total: seen.append((sent, total)))  # fmt: skip
    assert receiver.data == b"abcdefgh" and landed.landing_path == "/l/f"
    first = receiver.declared[0]
    assert first == Declaration(total_size=8, sha256=hashlib.sha256(b"abcdefgh").hexdigest())
    assert receiver.declared[1:] == [None, None] and seen[-1] == (8, 8)


@pytest.mark.parametrize("lie", [{"sha256": "0" * 64}, {"total_size": 3}, {"landing_path": None}])
async def test_a_final_ack_that_does_not_match_is_refused(lie: dict[str, Any]) -> None:
    with pytest.raises(InvalidResponseError):
        await push_blob(Receiver(lie), b"abcdef", chunk_bytes=4)


async def test_nothing_to_upload() -> None:
    with pytest.raises(ValueError, match="empty"):
        await push_blob(Receiver(), b"", chunk_bytes=4)
