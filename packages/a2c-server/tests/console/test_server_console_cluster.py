"""The console's feed across nodes on a real Redis: nothing is observed while nobody
watches anywhere, a viewer on one node makes the others publish, and they stop with it."""

from __future__ import annotations

from a2c_protocol import NAMESPACE
from a2c_server import ServerSettings
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
