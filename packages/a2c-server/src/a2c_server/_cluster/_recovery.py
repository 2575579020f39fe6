"""Multi-node: no routing on a registry that is still recovering.

After Redis restarts empty, each node puts its own sessions back on its next heartbeat,
so for a few seconds a Computer that never left is missing from the registry; and a
node's Socket.IO listener re-subscribes only after its reconnect. A call routed in that
window was answered 404 ("not connected": a retry-on-503 policy gives up) or published to
a node that was not listening (nobody received it; the caller waited out its timeout).
Here both become an immediate 503 ``registry_unavailable`` with ``details.delivered:
false`` (the call was not sent: trying again is safe):

* :func:`confirm_absent`: a name missing from the registry is trusted only once this
  node's heartbeats have reached the same registry epoch for ``settle`` seconds (every
  live node has put its sessions back by then);
* :func:`require_listener`: a call to a Computer on another node goes out only while
  this node receives from Redis (the answer comes back that way) and the other node's
  channel has a subscriber, asked with the registry deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from a2c_server._exceptions import StoreUnavailableError
from a2c_server._observe._logs import cause

from ._publish import Publisher

__all__ = ["Recovering", "confirm_absent", "require_listener"]


class Recovering(Protocol):
    """What :class:`~a2c_server._cluster._liveness.NodeLiveness` knows about the registry."""

    redis_ok: bool
    epoch: str | None
    #: Loop time before which the registry may still be missing live sessions.
    settled_from: float


def _unavailable(why: str) -> StoreUnavailableError:
    return StoreUnavailableError(f"registry unavailable: {why}")


async def confirm_absent(
    liveness: Recovering | None, current_epoch: Callable[[], Awaitable[str | None]]
) -> None:
    """Return when a name the registry does not know may be answered 404; else raise 503.

    Only on the refusal path (one extra round trip there, none on a routed call).
    """
    if liveness is None or not liveness.redis_ok:
        raise _unavailable("Redis was not reachable at the last heartbeat")
    if asyncio.get_running_loop().time() < liveness.settled_from:
        raise _unavailable("Redis is back and the nodes are still putting their sessions back")
    epoch = await current_epoch()
    if epoch is None or epoch != liveness.epoch:
        # Reset since this node's last heartbeat: nobody (or not everybody) is back yet.
        raise _unavailable("Redis was reset and the nodes are putting their sessions back")


async def require_listener(
    listening: bool, publisher: Publisher, channel: str, node: str, timeout: float
) -> None:
    """Raise 503 unless a call published on ``channel`` (``node``'s) can be answered."""
    if not listening:
        raise _unavailable("this node is not receiving from Redis (reconnecting)")
    audience = publisher.audience
    heard = audience.heard(channel, time.monotonic())  # the clock the publisher uses
    if heard is None:
        try:
            async with asyncio.timeout(timeout):
                count = await publisher.transport.subscribers(channel)
        except TimeoutError:
            # The registry answered the lookup just before: a slow Redis (a loaded host),
            # not a hung one. Publish; an unanswered call still ends in its 408.
            return
        except Exception as exc:
            raise _unavailable(f"cannot ask Redis who listens: {cause(exc)}") from exc
        audience.learn(channel, count, time.monotonic())
        heard = count > 0
    if not heard:
        raise _unavailable(f"node {node} is not listening on Redis")
