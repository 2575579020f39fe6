"""A flooding client against a real ``a2c-server``.

The flooder sends, as fast as its socket takes them, every kind of packet the request
limiter never saw: forged acknowledgements, ``server:tool_call_progress`` for calls that
are not its own, ``notify:*`` events a client may not send, and unknown events. The
per-connection inbound budget drops them undecoded and cuts the connection after 5 s of
sustained abuse; an honest Agent in another office keeps getting every answer. Latency
figures are in ``tools/bench/floods.py`` (timing asserts are flaky on a loaded machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

import httpx
import pytest
import socketio

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_testkit.rawws import RawWs
from a2c_testkit.triangle import server_process

pytestmark = pytest.mark.asyncio

KINDS = {
    "ack": '43/smcp,{n}[{{"forged":true}}]',
    "progress": '42/smcp,["server:tool_call_progress",{{"req_id":"r{n}","progress":1}}]',
    "notify": '42/smcp,["notify:update_tool_list",{{"computer":"x{n}"}}]',
    "unknown": '42/smcp,["client:no_such_event",{{"n":{n}}}]',
}


async def flood(ws: RawWs, kind: str, stop: asyncio.Event) -> int:
    template = KINDS[kind]
    sent = 0
    with contextlib.suppress(ConnectionError, OSError):
        while not stop.is_set():
            for _ in range(200):
                ws.send(template.format(n=sent))
                sent += 1
            await ws.drain()
    return sent


def counter(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_a_flooding_client_is_cut_and_its_neighbours_are_served(
    procs: Any, kind: str
) -> None:
    args = ["--max-inbound-per-second", "200", "--inbound-burst", "400"]
    async with (
        server_process(procs.log_dir, extra_args=args, track=procs.track) as server,
        httpx.AsyncClient(timeout=30) as http,
    ):
        flooder = await RawWs.open(server.port, rcvbuf=None)
        assert (await flooder.connect("computer")).startswith("40/smcp,")
        assert "true" in await flooder.join("computer", "mallory", "office-m")
        honest = socketio.AsyncClient()
        await honest.connect(f"{server.url}?a2c_version={PROTOCOL_VERSION}",
                             namespaces=[NAMESPACE], auth={"role": "agent"},
                             transports=["websocket"], wait_timeout=30)  # fmt: skip
        try:
            joined = await honest.call("server:join_office", {"role": "agent", "name": "v",
                                       "office_id": "office-v"}, namespace=NAMESPACE)  # fmt: skip
            assert joined[0] is True
            stop = asyncio.Event()
            flooding = asyncio.create_task(flood(flooder, kind, stop))
            answers = 0
            loop = asyncio.get_running_loop()
            start = loop.time()
            while not flooding.done() and loop.time() - start < 30:
                answer = await honest.call("server:list_room",
                                           {"agent": "v", "office_id": "office-v", "req_id": "q"},
                                           namespace=NAMESPACE, timeout=30)  # fmt: skip
                assert answer["sessions"][0]["name"] == "v"
                answers += 1
                # The honest client stays under the budget this test sets (200 packets/s):
                # back to back it asks ~1,000 times a second on a quiet machine, and its own
                # requests over budget would be dropped like the flooder's.
                await asyncio.sleep(0.02)
            stop.set()
            sent = await flooding
            assert flooding.done() and loop.time() - start < 30, "the flooder was never cut"
            assert await flooder.closed_by_server(10)
            metrics = (await http.get(f"{server.url}/metrics")).text
            assert counter(metrics, "a2c_server_inbound_disconnects_total") == 1
            dropped = counter(metrics, "a2c_server_inbound_refused_total")
            assert dropped > 0 and answers > 0
            log = server.process.logs()
            assert "client disconnected: sustained traffic over its inbound budget" in log
            assert log.count("packets dropped undecoded") <= 2  # once per 10 s
            assert "Traceback" not in log
            print(f"{kind}: sent {sent}, dropped {dropped:.0f}, honest answers {answers}")
        finally:
            await honest.disconnect()
            flooder.close()
