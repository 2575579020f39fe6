"""Guard for the Agent's fence (``a2c_agent/_upstream.py``): python-socketio's client internals.

The Agent tells "the Server refused our namespace" (an auth or version refusal: do not
retry) from "nobody answered" (retry) by python-socketio's undocumented
``AsyncClient.failed_namespaces``. If a release renames it, ``namespace_refused`` would say
False for every refusal and a refused Agent would be reported as unreachable.
"""

from __future__ import annotations

import socketio

from a2c_agent._upstream import namespace_refused
from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_server import ServerSettings
from a2c_testkit.server import running_server


def test_a_fresh_client_has_the_failed_namespaces_list() -> None:
    sio = socketio.AsyncClient(reconnection=False)
    assert isinstance(getattr(sio, "failed_namespaces", None), list), (
        "socketio.AsyncClient.failed_namespaces is gone: the Agent can no longer tell a "
        "refused namespace from an unreachable Server"
    )
    assert namespace_refused(sio) is False


async def test_a_refused_namespace_is_recorded_and_a_dead_host_is_not() -> None:
    async with running_server(ServerSettings(auth_token="s3cret")) as srv:
        url, path = srv.url, srv.socketio_path
        refused = socketio.AsyncClient(reconnection=False)
        try:
            await refused.connect(
                f"{url}?a2c_version={PROTOCOL_VERSION}",
                auth={"token": "wrong"},
                namespaces=[NAMESPACE],
                socketio_path=path,
                transports=["polling"],
                wait_timeout=10,
            )
        except socketio.exceptions.ConnectionError:
            pass
        finally:
            await refused.disconnect()
        assert namespace_refused(refused), (
            "python-socketio no longer records a refused namespace in failed_namespaces: "
            "a refused Agent would be told the Server is unreachable"
        )
    dead = socketio.AsyncClient(reconnection=False)
    try:
        await dead.connect(url, namespaces=[NAMESPACE], socketio_path=path, wait_timeout=5)
    except socketio.exceptions.ConnectionError:
        pass
    assert not namespace_refused(dead)
