"""The console's live feed: one state document per tick, and office events as they happen.

Nothing runs and nothing is recorded while nobody watches: the first viewer sets the
namespace's ``observer`` and starts the ticker, the last one clears it and stops it. A tick
reads the registry (:mod:`._registry`) and samples the Prometheus counters ``/metrics``
already keeps; calls are seen through :meth:`ConsoleFeed.watch_call`, which keeps the
office, event, tool and Computer names, never arguments or results.

A viewer may ask for less and more than the pages take: ``history=False`` skips the office
events kept from before it came (a follower prints what happens from now on), and
``calls=True`` adds one ``call`` event per finished call (the pages read calls from the
state documents, which keep only the last :data:`FINISHED`). ``a2c-agent watch --console``
asks for both: it follows an office without taking its Agent seat.

On several nodes sharing Redis the feed also shows what the other nodes relay
(:mod:`._cluster`): while one of them has a viewer this node's observer stays set and its
records are published for it, and records the other nodes publish are merged in here.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final

from a2c_protocol import Event
from a2c_server._observe._metrics import ServerMetrics
from a2c_server._observe._outcome import call_outcome

from ._registry import Registry

if TYPE_CHECKING:
    from ._cluster import ConsoleChannel

__all__ = ["ConsoleFeed", "Viewer"]

_log = logging.getLogger("a2c_server.console")

#: How many finished calls, office events and chart points the console keeps.
FINISHED: Final = 50
EVENTS: Final = 100
POINTS: Final = 90
TICK: Final = 1.0
#: A burst of calls refreshes the viewers at most this often.
MIN_INTERVAL: Final = 0.25
#: The payload keys of a notify:* the console repeats (names only).
_NOTICE_KEYS: Final = ("office_id", "computer", "agent", "req_id")

_REFUSED_ROUTES: Final = ("refused", "invalid")
_FAILED_ROUTES: Final = ("timeout", "computer_gone", "bad_answer", "unsupported", "shutdown")


class Viewer:
    """One open event stream: the latest state and the office events not sent yet."""

    def __init__(self, office: str | None, *, calls: bool = False) -> None:
        self.office = office
        self.calls = calls
        self.state: bytes | None = None
        self.events: collections.deque[bytes] = collections.deque(maxlen=EVENTS)
        self.wake = asyncio.Event()
        self.closed = False

    def take(self) -> list[bytes]:
        out = list(self.events)
        self.events.clear()
        if self.state is not None:
            out.append(self.state)
            self.state = None
        self.wake.clear()
        return out


def _sse(kind: str, document: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(document, separators=(',', ':'))}\n\n".encode()


class ConsoleFeed:
    """Implements the namespace's :class:`~._observer.CallObserver` while watched."""

    def __init__(
        self,
        *,
        registry: Registry,
        metrics: ServerMetrics,
        node_id: str,
        attach: Callable[[ConsoleFeed | None], None],
        stale_after: float = 330.0,
    ) -> None:
        self._registry = registry
        #: what the pages render before their stream starts
        self.registry = registry
        self._metrics = metrics
        self._node_id = node_id
        self._attach = attach
        self._viewers: set[Viewer] = set()
        self._task: asyncio.Task[None] | None = None
        self._dirty = asyncio.Event()
        self._next_id = 0
        # This node's calls by number; the other nodes' by (node, number).
        self._inflight: dict[Any, dict[str, Any]] = {}
        #: seconds after which another node's call never heard ending is dropped
        self._stale_after = stale_after
        self._cluster: ConsoleChannel | None = None
        self._attached = False
        self._finished: collections.deque[dict[str, Any]] = collections.deque(maxlen=FINISHED)
        self._events: collections.deque[dict[str, Any]] = collections.deque(maxlen=EVENTS)
        self._series: dict[str, collections.deque[float]] = {}
        self._last: dict[str, float] = {}
        self._last_sample = 0.0

    @property
    def viewers(self) -> int:
        return len(self._viewers)

    @property
    def calls_seen(self) -> int:
        """How many relayed calls the namespace handed to the console (only while watched)."""
        return self._next_id

    # -- the cluster -------------------------------------------------------------------

    def join_cluster(self, channel: ConsoleChannel) -> None:
        """Show the other nodes' records, and publish this node's while they are watched."""
        self._cluster = channel
        channel.changed = self._reattach
        channel.deliver = self._remote

    def _reattach(self) -> None:
        cluster = self._cluster
        wanted = bool(self._viewers) or (cluster is not None and cluster.remote_watchers)
        if wanted != self._attached:
            self._attached = wanted
            self._attach(self if wanted else None)

    def _remote(self, node: str, kind: str, record: dict[str, Any]) -> None:
        """A record another node published (only arrives while this node has viewers)."""
        key = (node, record.get("id"))
        if kind == "start":
            self._inflight[key] = record
            self._dirty.set()
        elif kind == "end":
            self._inflight.pop(key, None)
            self._finish(record)
        elif kind == "office" and isinstance(record.get("office"), str):
            self._office_record(record)

    # -- viewers ---------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def viewing(
        self, office: str | None, *, history: bool = True, calls: bool = False
    ) -> AsyncIterator[Viewer]:
        viewer = Viewer(office, calls=calls)
        if not self._viewers:
            self._task = asyncio.get_running_loop().create_task(self._run())
            if self._cluster is not None:
                self._cluster.watching(True)
        self._viewers.add(viewer)
        self._reattach()
        for event in self._events if history else ():
            if office is None or event["office"] == office:
                viewer.events.append(_sse("office", event))
        self._dirty.set()
        try:
            yield viewer
        finally:
            viewer.closed = True
            self._viewers.discard(viewer)
            if not self._viewers:
                self._stop()

    def _stop(self) -> None:
        self._reattach()
        if self._cluster is not None:
            self._cluster.watching(False)
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        # Nobody watches: calls are no longer followed and the charts would have a gap. The
        # last finished calls and office events (bounded) stay for the next page.
        self._inflight.clear()
        self._series.clear()
        self._last.clear()
        self._last_sample = 0.0

    async def start(self) -> None:
        """With the app: the cluster's watch (the feed itself starts with a viewer)."""
        if self._cluster is not None:
            await self._cluster.start()

    async def stop(self) -> None:
        """At shutdown, after :meth:`close`: the cluster's tasks."""
        if self._cluster is not None:
            await self._cluster.stop()

    def close(self) -> None:
        """At shutdown: end every stream."""
        for viewer in list(self._viewers):
            viewer.closed = True
            viewer.wake.set()

    # -- the observer (called by the namespace only while someone watches) -----------

    def watch_call(
        self, event: str, req: Any, office: str | None, call: Coroutine[Any, Any, Any]
    ) -> Coroutine[Any, Any, Any]:
        self._next_id += 1
        key = self._next_id
        entry = {
            "office": office, "event": event, "tool": getattr(req, "tool_name", None),
            "computer": getattr(req, "computer", None), "agent": getattr(req, "agent", None),
            "started": time.time(), "node": self._node_id,
        }  # fmt: skip
        if self._cluster is not None:
            self._cluster.send("start", dict(entry, id=key))
        return self._watched(key, entry, call)

    async def _watched(
        self, key: int, entry: dict[str, Any], call: Coroutine[Any, Any, Any]
    ) -> Any:
        self._inflight[key] = entry
        self._dirty.set()
        outcome: tuple[str, int | None] = ("failed", None)
        try:
            answer = await call
            outcome = call_outcome(answer)
            return answer
        finally:
            ended = time.time()
            done = dict(entry, outcome=outcome[0], code=outcome[1], ended=ended,
                        duration=round(ended - entry["started"], 3))  # fmt: skip
            if self._cluster is not None:
                self._cluster.send("end", dict(done, id=key))
            if self._inflight.pop(key, None) is not None:
                self._finish(done)

    def _finish(self, done: dict[str, Any]) -> None:
        done.pop("id", None)
        self._finished.appendleft(done)
        self._dirty.set()
        self._tell_calls(done)

    def _tell_calls(self, done: dict[str, Any]) -> None:
        message = None
        for viewer in self._viewers:
            if viewer.calls and viewer.office in (None, done.get("office")):
                message = message or _sse("call", done)
                viewer.events.append(message)
                viewer.wake.set()

    def office_event(self, office: str, event: str, payload: Any) -> None:
        notice = payload if isinstance(payload, dict) else {}
        record: dict[str, Any] = {"office": office, "event": event, "at": time.time()}
        for name in _NOTICE_KEYS:
            value = notice.get(name)
            if isinstance(value, str):
                record[name] = value
        if self._cluster is not None:
            self._cluster.send("office", record)
        self._office_record(record)

    def _office_record(self, record: dict[str, Any]) -> None:
        office = record["office"]
        self._events.append(record)
        message = _sse("office", record)
        for viewer in self._viewers:
            if viewer.office is None or viewer.office == office:
                viewer.events.append(message)
                viewer.wake.set()

    # -- the ticker ------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._dirty.wait(), TICK)
            except TimeoutError:
                pass
            else:
                await asyncio.sleep(MIN_INTERVAL)
            self._dirty.clear()
            try:
                await self._publish()
            except Exception:
                _log.exception("console tick failed")

    async def _publish(self) -> None:
        snapshot = await self._registry.read()
        now = time.time()
        counters = self._counters()
        if now - self._last_sample >= TICK * 0.9:
            self._sample(counters)
            self._last_sample = now
        for key in [k for k, e in self._inflight.items() if isinstance(k, tuple)
                    and now - _started(e, now) > self._stale_after]:  # fmt: skip
            del self._inflight[key]  # its node went away before the call ended
        inflight = [
            {k: v for k, v in entry.items() if k not in ("started", "id")}
            | {"age": round(now - _started(entry, now), 1)}
            for entry in self._inflight.values()
        ]
        base: dict[str, Any] = {
            "node": self._node_id, "now": now, "registry": snapshot.registry,
            "nodes": snapshot.nodes, "truncated": snapshot.truncated,
            "counters": counters,
            "series": {name: list(points) for name, points in self._series.items()},
        }  # fmt: skip
        documents: dict[str | None, bytes] = {}
        for viewer in list(self._viewers):
            message = documents.get(viewer.office)
            if message is None:
                office = viewer.office

                def mine(row: dict[str, Any], office: str | None = office) -> bool:
                    return office is None or row.get("office") == office

                document = dict(
                    base,
                    office=office,
                    members=[m for m in snapshot.members if mine(m)],
                    inflight=[c for c in inflight if mine(c)],
                    finished=[c for c in self._finished if mine(c)],
                )
                message = documents[office] = _sse("state", document)
            viewer.state = message
            viewer.wake.set()

    def _counters(self) -> dict[str, Any]:
        values: dict[str, float] = collections.defaultdict(float)
        routed: dict[str, float] = collections.defaultdict(float)
        for family in self._metrics.registry.collect():
            for sample in family.samples:
                name, labels, value = sample.name, sample.labels, sample.value
                if name == "a2c_server_routed_requests_total":
                    routed[labels["outcome"]] += value
                    if labels.get("event") == Event.TOOL_CALL.value:  # the "Calls routed" tile
                        values["tool_calls"] += value
                elif name == "a2c_server_joins_total" and labels.get("outcome") == "refused":
                    values["join_refusals"] += value
                elif name == "a2c_server_connected_clients":
                    values["connected_" + labels["role"]] += value
                elif name in (
                    "a2c_server_connection_refusals_total", "a2c_server_version_refusals_total",
                    "a2c_server_polling_refusals_total",
                    "a2c_server_messages_dropped_for_size_total",
                    "a2c_server_tool_calls_cancelled_for_absent_agent_total",
                    "a2c_server_pubsub_messages_lost_total", "process_cpu_seconds_total",
                    "process_resident_memory_bytes",
                ):  # fmt: skip
                    values[name.removeprefix("a2c_server_").removesuffix("_total")] += value
        refusals = (
            sum(routed[o] for o in _REFUSED_ROUTES) + values["join_refusals"]
            + values["connection_refusals"] + values["version_refusals"]
            + values["polling_refusals"] + values["messages_dropped_for_size"]
        )  # fmt: skip
        errors = sum(routed[o] for o in _FAILED_ROUTES) + values["pubsub_messages_lost"]
        return dict(values, routed=dict(routed), calls=values["tool_calls"],
                    refusals=refusals, errors=errors)  # fmt: skip

    def _sample(self, counters: dict[str, Any]) -> None:
        """One chart point per second: what each counter grew by since the last one."""
        for name in ("calls", "refusals", "errors", "process_cpu_seconds"):
            value = float(counters.get(name, 0.0))
            previous = self._last.get(name)
            self._last[name] = value
            if previous is None:
                continue
            delta = max(0.0, value - previous)
            if name == "process_cpu_seconds":
                delta = round(delta * 100, 1)  # percent of one core over the second
            series = self._series.setdefault(name, collections.deque(maxlen=POINTS))
            series.append(delta)
        memory = counters.get("process_resident_memory_bytes")
        if memory:
            series = self._series.setdefault("memory_mb", collections.deque(maxlen=POINTS))
            series.append(round(memory / 1e6, 1))


def _started(entry: dict[str, Any], now: float) -> float:
    started = entry.get("started")
    return float(started) if isinstance(started, int | float) else now
