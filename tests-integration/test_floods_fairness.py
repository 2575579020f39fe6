"""Flood fairness against a real ``a2c-server``: notices coalesced, stale acks.

* A Computer flooding its own office with ``server:update_tool_list`` costs each member
  at most one ``notify:update_tool_list`` per ``--notice-interval``, and the last one
  still arrives after the flood.
* An acknowledgement for an id the Server does not wait for, and an event whose name no
  handler takes (``notify:*`` from a client), are refused from their head, before
  decoding: a broken payload behind them is never seen by the decoder, while the acks of
  real calls still reach their callers.
* A flooder of refused packets is cut at the default budget.

Bounds are counted, not timed: every notice the member got was sent between the
flooder's first packet and the member's last receipt, at least an interval apart.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import pytest
import socketio

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_testkit.rawws import RawWs
from a2c_testkit.triangle import eventually, server_process

pytestmark = pytest.mark.asyncio

INTERVAL = 1.0
NOTICES = 3000


def counter(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


async def agent(url: str, name: str, office: str) -> socketio.AsyncClient:
    client = socketio.AsyncClient(reconnection=False)
    await client.connect(f"{url}?a2c_version={PROTOCOL_VERSION}", namespaces=[NAMESPACE],
                         auth={"role": "agent"}, transports=["websocket"],
                         wait_timeout=30)  # fmt: skip
    joined = await client.call("server:join_office", {"role": "agent", "name": name,
                               "office_id": office}, namespace=NAMESPACE, timeout=30)  # fmt: skip
    assert joined[0] is True
    return client


async def test_a_notice_flood_costs_its_office_one_notice_per_interval(procs: Any) -> None:
    args = ["--notice-interval", str(INTERVAL)]
    async with server_process(procs.log_dir, extra_args=args, track=procs.track) as server:
        flooder = await RawWs.open(server.port, rcvbuf=None)
        assert (await flooder.connect("computer")).startswith("40/smcp,")
        assert "true" in await flooder.join("computer", "box-n", "office-n")
        member = await agent(server.url, "member", "office-n")
        loop = asyncio.get_running_loop()
        heard: list[tuple[float, Any]] = []
        member.on("notify:update_tool_list", lambda data: heard.append((loop.time(), data)),
                  namespace=NAMESPACE)  # fmt: skip
        try:
            notice = '42/smcp,["server:update_tool_list",{"computer":"box-n"}]'
            started = loop.time()
            for sent in range(NOTICES):
                flooder.send(notice)
                if sent % 200 == 199:
                    await flooder.drain()
            await flooder.drain()
            ended = loop.time()
            # The last notice is never lost: one reaches the member after the flood.
            await eventually(lambda: heard and heard[-1][0] > ended, timeout=60,
                             what="a notice after the flood")  # fmt: skip
            await asyncio.sleep(2 * INTERVAL)  # a held one would have come by now
            window = heard[-1][0] - started
            assert len(heard) <= window / INTERVAL + 1, (len(heard), window)
            assert all(data == {"computer": "box-n"} for _, data in heard)
            assert "Traceback" not in server.process.logs()
            print(f"{NOTICES} notices sent in {ended - started:.2f} s, {len(heard)} heard")
        finally:
            await member.disconnect()
            flooder.close()


async def test_acks_and_events_nobody_takes_are_refused_before_decoding(procs: Any) -> None:
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        httpx.AsyncClient(timeout=30) as http,
    ):
        box = await RawWs.open(server.port, rcvbuf=None)
        assert (await box.connect("computer")).startswith("40/smcp,")
        assert "true" in await box.join("computer", "box-a", "office-a")
        caller = await agent(server.url, "caller", "office-a")
        try:
            # Broken JSON after the head: decoding it would fail (and be logged as such).
            for n in range(50):
                box.send(f'43/smcp,{1000 + n}[{{"forged":')
            box.send('43/smcp,99999999999999999999999[{"forged":true}]')
            box.send('43/smcp?x=1,5[{"forged":true}]')
            # Names no handler takes (a client may not send notify:*): dropped from the head.
            for n in range(20):
                box.send(f'42/smcp,["notify:update_tool_list",{{"computer":{n}')
            await box.drain()
            # A real call still gets its answer through the same path.
            call = asyncio.create_task(caller.call("client:tool_call", {
                "agent": "caller", "req_id": "r1", "computer": "box-a", "tool_name": "t",
                "params": {}, "timeout": 20}, namespace=NAMESPACE, timeout=30))  # fmt: skip
            request = await box.recv_until("42/smcp,", timeout=30)
            while "client:tool_call" not in request:  # office notices come first
                request = await box.recv_until("42/smcp,", timeout=30)
            ack_id = re.match(r"42/smcp,(\d+)\[", request)
            assert ack_id is not None, request
            result = {"content": [{"type": "text", "text": "done"}], "isError": False}
            box.send(f"43/smcp,{ack_id.group(1)}" + json.dumps([result]))
            await box.drain()
            answer = await call
            assert answer["content"][0]["text"] == "done"

            async def refused() -> float:
                text = (await http.get(f"{server.url}/metrics")).text
                return counter(text, "a2c_server_stale_acks_refused_total")

            # Same connection, so all of them were handled before the real ack above.
            assert await refused() == 52
            text = (await http.get(f"{server.url}/metrics")).text
            assert counter(text, "a2c_server_unhandled_events_refused_total") == 20
            log = server.process.logs()
            assert "cannot decode" not in log
            assert "acks dropped undecoded: no call waits for the id" in log
            assert "events dropped undecoded: no handler for the name" in log
            assert "Traceback" not in log
        finally:
            await caller.disconnect()
            box.close()


FORGED = (
    '43/smcp,{n}[{{"forged":true}}]',
    '42/smcp,["server:tool_call_progress",{{"req_id":"r{n}","progress":1}}]',
    '42/smcp,["notify:update_tool_list",{{"computer":"x{n}"}}]',
    '42/smcp,["server:update_tool_list",{{"computer":"box-v"}}]',
    '42/smcp,["client:no_such_event",{{"n":{n}}}]',
)


async def test_a_refused_flood_is_cut_at_the_default_budget(procs: Any) -> None:
    # Default settings: a flooder the Server reads below --max-inbound-per-second is still
    # cut, because each packet it refuses costs the session more than one packet.
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        httpx.AsyncClient(timeout=30) as http,
    ):
        flooder = await RawWs.open(server.port, rcvbuf=None)
        assert (await flooder.connect("computer")).startswith("40/smcp,")
        assert "true" in await flooder.join("computer", "mallory", "office-m")
        closed = asyncio.create_task(flooder.closed_by_server(120))
        sent = 0
        try:
            while not closed.done() and sent < 5_000_000:
                for _ in range(200):
                    flooder.send(FORGED[sent % len(FORGED)].format(n=sent))
                    sent += 1
                await flooder.drain()
        except (ConnectionError, OSError):
            pass
        try:
            assert await closed, "the flooder was never cut"
            metrics = (await http.get(f"{server.url}/metrics")).text
            assert counter(metrics, "a2c_server_inbound_disconnects_total") == 1
            log = server.process.logs()
            assert "client disconnected: sustained traffic over its inbound budget" in log
            assert "Traceback" not in log
        finally:
            flooder.close()
