"""The Agent side of skills (spec delta §4): the skill cache and reading skill files.

Rules:

* names are opaque: they are copied verbatim from ``A2CSkillRef.name``; the Agent never
  builds one;
* a ``client:get_skill`` answer carries the file inline (``body``) or by ``blob_handle``;
  either way the bytes handed to the caller are checked against ``total_size`` and
  ``sha256`` (:class:`SkillIntegrityError` otherwise). On the handle path the blob is
  pulled with the shared pull routine; a 4018 ``gone`` (the handle expired or the file was
  restaged) earns one fresh ``client:get_skill`` and a pull with the new handle;
* the cache holds the last list per Computer. It is filled by every ``get_skills`` and by
  ``notify:update_skills`` (which always refetches, like the tool cache), dropped for a
  Computer that leaves the office and cleared when the agent leaves it. A fetch only lands
  if nothing newer happened to that Computer since it started.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs

from a2c_protocol import (
    A2CError,
    A2CSkillRef,
    BlobNotAccessibleError,
    BlobReason,
    Event,
    GetSkillRet,
    is_text_mime,
)

from ._exceptions import SkillIntegrityError
from ._notify import Listeners
from ._rpc._blobpull import BlobData
from ._rules import PerComputerCache
from ._types import AgentNotification

__all__ = ["SkillFile", "SkillTracker", "SkillsListener", "read_skill_file"]

logger = logging.getLogger("a2c_agent.skills")

#: ``callback(computer, skills)``; ``skills`` is None when the Computer's entry was dropped.
SkillsListener = Callable[[str, "tuple[A2CSkillRef, ...] | None"], Any]

#: ``ask(name, rel_path) -> GetSkillRet`` (one ``client:get_skill``).
AskSkill = Callable[[str, str], Awaitable[GetSkillRet]]
#: ``pull(handle, max_bytes) -> BlobData`` (the shared blob reader).
PullBlob = Callable[[str, int | None], Awaitable[BlobData]]


@attrs.frozen
class SkillFile:
    """One file of one skill, verified against the ``sha256`` the Computer gave.

    For ``SKILL.md`` the bytes are the body after the YAML frontmatter (the Computer
    removes it). ``is_text`` follows the protocol's text-MIME rule; :meth:`text` decodes.
    """

    name: str
    rel_path: str
    mime_type: str
    sha256: str
    data: bytes = attrs.field(repr=lambda d: f"<{len(d)} bytes>")

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def is_text(self) -> bool:
        return is_text_mime(self.mime_type)

    def text(self, errors: str = "strict") -> str:
        """The bytes decoded as UTF-8 (``errors`` as for :meth:`bytes.decode`)."""
        return self.data.decode("utf-8", errors)


def _verified(ret: GetSkillRet, data: bytes) -> SkillFile:
    actual = hashlib.sha256(data).hexdigest()
    if len(data) != ret.total_size or actual != ret.sha256.lower():
        raise SkillIntegrityError(
            ret.name,
            ret.rel_path,
            f"{ret.total_size} bytes, sha256 {ret.sha256}",
            f"{len(data)} bytes, sha256 {actual}",
        )
    return SkillFile(
        name=ret.name, rel_path=ret.rel_path, mime_type=ret.mime_type, sha256=actual, data=data
    )


async def read_skill_file(
    ask: AskSkill, pull: PullBlob, name: str, rel_path: str, *, max_bytes: int | None = None
) -> SkillFile:
    """Ask for one skill file and return its verified bytes (see the module rules)."""
    for attempt in (1, 2):
        ret = await ask(name, rel_path)
        if ret.body is not None:
            return _verified(ret, ret.body.encode("utf-8"))
        if ret.blob_handle is None:  # the model forbids it; keep mypy and peers honest
            raise SkillIntegrityError(name, rel_path, "body or blob_handle", "neither")
        try:
            blob = await pull(ret.blob_handle, max_bytes)
        except BlobNotAccessibleError as exc:
            if exc.reason == BlobReason.GONE and attempt == 1:
                logger.info("skill %r file %r: handle gone, asking again", name, rel_path)
                continue
            raise
        return _verified(ret, blob.data)
    raise AssertionError("unreachable")  # pragma: no cover


class SkillTracker:
    """The per-Computer skill cache and its listeners (the Agent owns one)."""

    def __init__(
        self,
        fetch: Callable[[str], Awaitable[Sequence[A2CSkillRef]]],
        spawn: Callable[[Awaitable[Any]], None],
    ) -> None:
        self._fetch = fetch
        self._spawn = spawn
        self._cache: PerComputerCache[A2CSkillRef] = PerComputerCache()
        self._listeners = Listeners(spawn)

    def view(self) -> Mapping[str, tuple[A2CSkillRef, ...]]:
        return self._cache.view()

    def add_listener(self, callback: SkillsListener) -> Callable[[], None]:
        return self._listeners.add(callback)

    async def fetch(self, computer: str) -> list[A2CSkillRef]:
        """Ask ``computer`` for its skills, store them and tell the listeners."""
        token = self._cache.begin_fetch(computer)
        skills = tuple(await self._fetch(computer))
        if self._cache.complete_fetch(computer, token, skills):
            self._listeners.fire(computer, skills)
        return list(skills)

    async def refresh(self, computer: str) -> None:
        try:
            await self.fetch(computer)
        except A2CError as exc:
            logger.warning("could not refresh the skills of %r: %s", computer, exc)

    def on_notification(self, notification: AgentNotification) -> None:
        """``notify:update_skills`` refetches; a Computer leaving drops its entry."""
        computer = notification.computer
        if computer is None:
            return
        if notification.event is Event.NOTIFY_UPDATE_SKILLS:
            self._spawn(self.refresh(computer))
        elif notification.event is Event.NOTIFY_LEAVE_OFFICE and self._cache.drop(computer):
            self._listeners.fire(computer, None)

    def clear(self) -> None:
        dropped = list(self._cache.view())
        self._cache.clear()
        for computer in dropped:
            self._listeners.fire(computer, None)
