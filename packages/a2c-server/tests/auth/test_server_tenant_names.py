"""Names are per office: a tenant learns nothing about the names of offices it may not join.

Two tenants on one Server with JWT grants (``a-*`` and ``b-*``, no ``name`` in either:
"any free name"), on one memory node and on two Redis nodes (clients alternate). Every
answer tenant A can get (a join under the name, a call to it, a listing of B's office) is
the same whether B's Computer is online or not, and B's Computer reconnecting under its
name is never refused because A holds the same name in its own office.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from a2c_protocol import Event
from a2c_server import JwksKeys, JwtAuth, ServerSettings
from a2c_testkit.issuer import Issuer, running_issuer
from a2c_testkit.redis_server import RedisServer
from a2c_testkit.server import (
    RawClient,
    RunningServer,
    assert_registry_matches_rooms,
    connect_raw,
    running_nodes,
    running_server,
)

TENANT_A_PC = {"role": "computer", "offices": ["a-*"]}
TENANT_A_AGENT = {"role": "agent", "offices": ["a-*"]}
TENANT_B_PC = {"role": "computer", "offices": ["b-*"]}


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer() as it:
        yield it


@pytest.fixture(params=["memory", "redis"])
async def server(request: pytest.FixtureRequest, issuer: Issuer) -> AsyncIterator[RunningServer]:
    auth = JwtAuth(issuer=issuer.issuer, audience=issuer.audience,
                   jwks=JwksKeys(issuer.url, min_refresh=0.2))  # fmt: skip
    if request.param == "memory":
        async with running_server(ServerSettings(), auth=auth) as srv:
            yield srv
        return
    redis: RedisServer = request.getfixturevalue("redis")
    async with running_nodes(redis.url, ServerSettings(), auth=auth, count=2) as srv:
        yield srv


@contextlib.asynccontextmanager
async def client(server: RunningServer, role: str, token: str) -> AsyncIterator[RawClient]:
    async with connect_raw(server, role, auth={"token": token}, transports=["websocket"]) as c:
        yield c


async def what_a_learns(server: RunningServer, issuer: Issuer) -> list[Any]:
    """Every answer tenant A gets when it asks about the name ``prod-pc``."""
    answers: list[Any] = []
    async with (
        client(server, "computer", issuer.token("tenant-a", TENANT_A_PC)) as pc,
        client(server, "agent", issuer.token("tenant-a", TENANT_A_AGENT)) as agent,
    ):
        answers.append(await pc.join("computer", "prod-pc", "a-1"))
        answers.append(await pc.join("computer", "prod-pc", "b-1"))  # outside the grant
        answers.append(await pc.call(Event.LEAVE_OFFICE, {"office_id": "a-1"}))
        answers.append(await agent.join("agent", "a-agent", "a-2"))
        for event in (Event.GET_TOOLS, Event.GET_CONFIG, Event.TOOL_CALL):
            data: dict[str, Any] = {"agent": "a-agent", "computer": "prod-pc", "req_id": "r1"}
            if event is Event.TOOL_CALL:
                data.update(tool_name="shell", params={}, timeout=5)
            answers.append(await agent.call(event, data))
        listing = {"agent": "a-agent", "office_id": "b-1", "req_id": "r2"}
        answers.append(await agent.call(Event.LIST_ROOM, listing))
    return answers


async def test_tenant_cannot_tell_whether_a_name_is_online_in_another_tenants_office(
    server: RunningServer, issuer: Issuer
) -> None:
    offline = await what_a_learns(server, issuer)
    async with client(server, "computer", issuer.token("tenant-b", TENANT_B_PC)) as b_pc:
        assert await b_pc.join("computer", "prod-pc", "b-1") == (True, None)
        online = await what_a_learns(server, issuer)
    assert online == offline
    assert offline[0] == (True, None)  # the name is A's to use in A's offices
    assert [a.get("code") for a in offline[4:] if isinstance(a, dict)] == [404, 404, 404, 4104]


async def test_tenant_holding_a_name_does_not_lock_out_another_tenants_computer(
    server: RunningServer, issuer: Issuer
) -> None:
    b_token = issuer.token("tenant-b", TENANT_B_PC)
    async with client(server, "computer", b_token) as b_pc:
        assert await b_pc.join("computer", "prod-pc", "b-1") == (True, None)
    async with client(server, "computer", issuer.token("tenant-a", TENANT_A_PC)) as squatter:
        assert await squatter.join("computer", "prod-pc", "a-1") == (True, None)
        # B's Computer reconnects (a new session, maybe on the other node) under its name.
        for _ in range(2):
            async with client(server, "computer", b_token) as b_pc:
                assert await b_pc.join("computer", "prod-pc", "b-1") == (True, None)
                for node in server.nodes or (server,):
                    store = node.app.store
                    assert await store.sid_of("a-1", "prod-pc") == squatter.sio.get_sid("/smcp")
                    assert await store.sid_of("b-1", "prod-pc") == b_pc.sio.get_sid("/smcp")
                await assert_registry_matches_rooms(server)
