"""Which address a client counts as, on real binds: dual-stack, and behind a named proxy.

* ``--host ::`` reports every IPv4 client as ``::ffff:a.b.c.d``; keyed per /64 they all
  shared ``::/64``, so one IPv4 flooder made every other IPv4 client wait its turns (or be
  refused). One key function unwraps them for pacing and for the unadmitted cap alike.
* ``X-Forwarded-For`` is believed only from the proxies the operator names
  (``--forwarded-allow-ips``, empty by default): a local client cannot pick its address.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import httpx
import pytest
import socketio

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_server import ServerSettings
from a2c_server._floods._address import address_key
from a2c_testkit import RunningServer, running_server
from a2c_testkit.triangle import server_process


def _ipv6_available() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(
    not _ipv6_available(), reason="the kernel has no IPv6 (cannot bind ::1): no dual-stack bind"
)


def test_address_key_unwraps_ipv4_in_ipv6() -> None:
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("::ffff:192.0.2.7") != address_key("::ffff:192.0.2.8")
    assert address_key("64:ff9b::c000:207") == "192.0.2.7"  # NAT64 well-known prefix
    assert address_key("64:ff9b::c000:208") == "192.0.2.8"
    assert address_key("[2001:db8:1:2::1]") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("?") == "?" and address_key("not:an:address") == "not:an:address"


def handshake(srv: RunningServer) -> str:
    return f"{srv.url}/{srv.socketio_path}/?EIO=4&transport=polling&a2c_version={PROTOCOL_VERSION}"


def from_address(source: str) -> httpx.AsyncClient:
    """An HTTP client whose TCP connections leave from ``source`` (a 127.0.0.0/8 address)."""
    return httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(local_address=source),
                             timeout=30)  # fmt: skip


@needs_ipv6
async def test_dual_stack_an_ipv4_flooder_does_not_take_other_ipv4_clients_turns() -> None:
    async with (
        running_server(ServerSettings(handshake_pace=1), host="::") as srv,
        from_address("127.0.0.2") as flooder,
        from_address("127.0.0.3") as honest,
    ):
        pacer = srv.app.handshake_turns.pacer
        for _ in range(30):  # what the cheap refusal path counts under a flood
            pacer.refused(asyncio.get_running_loop().time())
        assert (await flooder.get(handshake(srv))).status_code == 200  # the free turn
        # Three from the flooder, then one from another IPv4 host: turns at +1 s (flood),
        # +2 s (the other host), +3 s, +4 s. Keyed as ::/64 it would wait behind all three.
        flood = [asyncio.create_task(flooder.get(handshake(srv))) for _ in range(3)]
        while pacer.waiting < 3:
            await asyncio.sleep(0.01)
        other = await honest.get(handshake(srv))
        assert other.status_code == 200
        assert sum(1 for t in flood if t.done()) <= 1, "the other IPv4 host waited behind them"
        for task in flood:
            assert (await task).status_code == 200


@needs_ipv6
async def test_dual_stack_the_unadmitted_cap_counts_each_ipv4_host_on_its_own() -> None:
    settings = ServerSettings(max_unadmitted_per_address=2)
    async with (
        running_server(settings, host="::") as srv,
        from_address("127.0.0.2") as busy,
        from_address("127.0.0.3") as neighbour,
        httpx.AsyncClient(timeout=30) as ipv6,
    ):
        for _ in range(3):
            assert (await busy.get(handshake(srv))).status_code == 200
        assert (await neighbour.get(handshake(srv))).status_code == 200
        over_v6 = handshake(srv).replace("127.0.0.1", "[::1]")
        assert (await ipv6.get(over_v6)).status_code == 200
        addresses = sorted(addr for addr, _ in srv.app.sio._pending.values())
        # The same key as pacing: the IPv4 address, not ::ffff:… nor ::/64.
        assert addresses == ["127.0.0.2", "127.0.0.2", "127.0.0.3", "::/64"], addresses
        assert srv.app.sio.refusals.counts.get("unadmitted_evicted") == 1


async def roleless(url: str, forwarded: str) -> object:
    """A role-less connect claiming ``forwarded``; the client, or its connect_error data."""
    errors: list[object] = []
    sio = socketio.AsyncClient(reconnection=False)
    sio.on("connect_error", errors.append, namespace=NAMESPACE)
    try:
        await sio.connect(f"{url}?a2c_version={PROTOCOL_VERSION}", namespaces=[NAMESPACE],
                          headers={"X-Forwarded-For": forwarded}, transports=["websocket"],
                          wait_timeout=30)  # fmt: skip
    except socketio.exceptions.ConnectionError:
        await sio.shutdown()
        return errors[0]["data"] if errors else "refused without a connect_error"  # type: ignore[index]
    return sio


@pytest.mark.parametrize("named", [False, True], ids=["by-default", "proxy-named"])
async def test_forwarded_for_is_believed_only_from_a_named_proxy(
    tmp_path: Path, named: bool
) -> None:
    # Allow-all counts its one subject per client address: two connects that claim two
    # addresses are two hosts only if the claim is believed.
    args = ["--max-connections-per-subject", "1", "--join-timeout", "0"]
    if named:
        args += ["--forwarded-allow-ips", "127.0.0.1"]
    async with server_process(tmp_path, extra_args=args) as server:
        first = await roleless(server.url, "203.0.113.1")
        assert isinstance(first, socketio.AsyncClient), first
        second = await roleless(server.url, "203.0.113.2")
        try:
            if named:
                assert isinstance(second, socketio.AsyncClient), second
            else:
                assert second == {"code": 429, "message": "Too many connections: this "
                                  "identity may hold 1 from one address"}  # fmt: skip
                log = server.process.logs()
                assert "peer=127.0.0.1" in log and "203.0.113" not in log, log
        finally:
            for client in (first, second):
                if isinstance(client, socketio.AsyncClient):
                    await client.shutdown()
