"""Fixtures of the landing-dir tests: stores on a ``tmp_path`` (closed after the test), the
clock they read, a chunk builder and an uploader that sends one file in chunks, as an
Agent does (fixtures, as the test folders are no packages)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from a2c_computer._landing import LandingSettings, LandingStore
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


async def upload(store: LandingStore, data: bytes, name: str | None = "f.bin", size: int = 4,
                 agent: str = "bot") -> dict[str, Any]:  # fmt: skip
    """Send ``data`` in chunks of ``size``; the last ack (or the first refusal)."""
    digest = hashlib.sha256(data).hexdigest()
    parts = [data[i : i + size] for i in range(0, len(data), size)]
    uid = None
    answer: dict[str, Any] = {}
    for i, part in enumerate(parts):
        eof = i == len(parts) - 1
        declared = (
            {"total_size": len(data), "sha256": digest, "name_hint": name} if uid is None else {}
        )
        answer = await store.put(chunk(part, i * size, uid=uid, eof=eof, agent=agent, **declared))
        if "code" in answer:
            return answer
        uid = answer["upload_id"]
    return answer


StoreFactory = Callable[..., Awaitable[LandingStore]]


@pytest.fixture
def clock() -> Clock:
    """The clock of the stores ``make_store`` makes (advance ``clock.now``)."""
    return Clock()


@pytest.fixture
def chunk_of() -> Callable[..., PutBlobReq]:
    """``chunk_of(data, offset, uid=, eof=, agent=, **declared)``: one put_blob request."""
    return chunk


@pytest.fixture
def send() -> Callable[..., Awaitable[dict[str, Any]]]:
    """``await send(store, data, name=, size=, agent=)``: a whole upload; its last answer."""
    return upload


@pytest.fixture
async def make_store(tmp_path: Path, clock: Clock) -> AsyncIterator[StoreFactory]:
    """``await make_store(**settings)``: an opened store on ``tmp_path`` (or ``landing_dir``),
    closed at the end of the test."""
    stores: list[LandingStore] = []

    async def make(**settings: Any) -> LandingStore:
        settings.setdefault("landing_dir", tmp_path)
        store = LandingStore(LandingSettings(**settings), clock=clock)
        stores.append(store)
        if settings["landing_dir"] is not None:
            await store.open()
        return store

    yield make
    for store in stores:
        await store.aclose()
