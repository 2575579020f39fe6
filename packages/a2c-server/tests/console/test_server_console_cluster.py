"""The console's feed across nodes on a real Redis: nothing is observed while nobody
watches anywhere, a viewer on one node makes the others publish, and they stop with it."""

from __future__ import annotations

import json

from a2c_protocol import NAMESPACE
from a2c_server import ServerSettings
from a2c_server._console._cluster import ConsoleChannel
from a2c_server._console._feed import ConsoleFeed
from a2c_server._observe._metrics import ServerMetrics
from a2c_testkit import RunningServer
from a2c_testkit.redis_server import redis_server
from a2c_testkit.server import running_nodes
from a2c_testkit.triangle import eventually


def observer(node: RunningServer) -> object:
    namespace = node.app.sio.handlers[NAMESPACE]["connect"].__self__  # SmcpNamespace
    return namespace.observer


async def test_console_other_nodes_observe_only_while_a_viewer_is_open() -> None:
    with redis_server() as redis:
        async with running_nodes(redis.url, ServerSettings(console=True)) as srv:
            node_a, node_b = srv.nodes
            assert node_a.app.console is not None and node_b.app.console is not None
            # Nobody watches: the relay's hot path sees no observer on either node.
            assert observer(node_a) is None and observer(node_b) is None
            async with node_b.app.console.feed.viewing(None):
                assert observer(node_b) is node_b.app.console.feed
                await eventually(lambda: observer(node_a) is not None, timeout=30,
                                 what="node A publishing for B's viewer")  # fmt: skip
            await eventually(lambda: observer(node_a) is None, timeout=30,
                             what="node A no longer observing")  # fmt: skip
            assert observer(node_b) is None


class _Req:
    tool_name = "echo"
    computer = "box"
    agent = "ag"


async def _answer() -> dict[str, object]:
    return {"content": [{"type": "text", "text": "secret result"}], "isError": False}


async def test_console_records_go_out_only_while_watched_elsewhere_and_come_in_by_node() -> None:
    sent: list[tuple[str, bytes]] = []

    async def nobody(channel: str) -> int:
        return 0

    channel = ConsoleChannel(channel="p:console", node_id="n1", subscribers=nobody,
                             publish=lambda c, p: sent.append((c, p)), pubsub=lambda: None)  # fmt: skip
    attached: list[object] = []
    feed = ConsoleFeed(registry=None, metrics=ServerMetrics(), node_id="n1",  # type: ignore[arg-type]
                       attach=attached.append)  # fmt: skip
    feed.join_cluster(channel)
    await feed.watch_call("client:tool_call", _Req(), "o1", _answer())
    assert sent == []  # nobody watches on another node: nothing published
    channel.remote_watchers = True
    channel.changed()
    assert attached == [feed]  # observed for the other node's viewer, none here
    await feed.watch_call("client:tool_call", _Req(), "o1", _answer())
    feed.office_event("o1", "notify:enter_office", {"office_id": "o1", "computer": "box"})
    kinds = [json.loads(p)["kind"] for _, p in sent]
    assert kinds == ["start", "end", "office"] and {c for c, _ in sent} == {"p:console"}
    assert b"secret" not in b"".join(p for _, p in sent)  # names only
    (_, end) = sent[1]
    channel.remote_watchers = False
    channel.changed()
    assert attached == [feed, None]
    # What another node published reaches a follower here; this node's own is skipped.
    async with feed.viewing("o1", history=False, calls=True) as follower:
        follower.take()
        channel._received(end.replace(b'"n1"', b'"n2"'))
        channel._received(end)  # its own: recorded already
        channel._received(b"not json")  # dropped with a DEBUG line
        calls = [c for c in follower.take() if c.startswith(b"event: call")]
        assert len(calls) == 1 and b'"node":"n2"' in calls[0]  # the relaying node
