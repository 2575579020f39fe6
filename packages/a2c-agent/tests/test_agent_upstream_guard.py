"""Guard for the Agent's fence (``a2c_agent/_upstream.py``): python-socketio's client
internals, and where opentelemetry-api keeps the global tracer provider.

The Agent tells "the Server refused our namespace" (an auth or version refusal: do not
retry) from "nobody answered" (retry) by python-socketio's undocumented
``AsyncClient.failed_namespaces``. If a release renames it, ``namespace_refused`` would say
False for every refusal and a refused Agent would be reported as unreachable.

The Agent skips a tool call's span while no tracer provider is set, read from
opentelemetry-api's ``trace._TRACER_PROVIDER`` (the public check reads the environment on
every call). If that global stops following ``set_tracer_provider``, a configured tracer
would record no tool-call span; if it is gone, the public check takes over.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import ModuleType

import socketio

from a2c_agent._upstream import namespace_refused, tracer_provider_unset
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


_PROVIDER_CHECK = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from a2c_agent._rpc._otel import tracing_idle
from a2c_agent._upstream import tracer_provider_unset
assert tracer_provider_unset(trace) is ({unset_first}), "unset before"
assert tracing_idle() is ({unset_first}), "idle before"
trace.set_tracer_provider(TracerProvider())
assert tracer_provider_unset(trace) is False, "unset after set_tracer_provider"
assert not tracing_idle(), "idle after set_tracer_provider"
"""


def _run(code: str, **env: str) -> None:
    # A process of its own: a tracer provider can be set once per process.
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, **env})


def test_the_tracer_provider_global_follows_set_tracer_provider() -> None:
    _run(_PROVIDER_CHECK.format(unset_first=True))


def test_a_provider_named_in_the_environment_is_honoured() -> None:
    code = (
        "from opentelemetry import trace\n"
        "from a2c_agent._rpc._otel import tracing_idle\n"
        "assert not tracing_idle(), 'the provider named by OTEL_PYTHON_TRACER_PROVIDER'\n"
        "assert not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)\n"
    )
    _run(code, OTEL_PYTHON_TRACER_PROVIDER="sdk_tracer_provider")


def test_without_the_global_the_public_check_decides() -> None:
    assert tracer_provider_unset(ModuleType("opentelemetry.trace")) is None


def test_mcp_still_logs_the_teardown_messages_the_bridge_quiets() -> None:
    # quiet_host_departures matches mcp's messages: renamed, the filter would match nothing
    # and a host leaving would be an ERROR with a traceback again.
    import inspect

    from mcp.server import streamable_http

    from a2c_agent._upstream import MCP_TEARDOWN_MESSAGES

    source = inspect.getsource(streamable_http)
    for message in MCP_TEARDOWN_MESSAGES:
        assert f'logger.exception("{message}")' in source, (
            f"mcp.server.streamable_http no longer logs {message!r}: update the fence"
        )


def test_the_departure_filter_drops_only_closed_streams() -> None:
    import logging

    import anyio

    from a2c_agent._upstream import quiet_host_departures

    quiet_host_departures()
    quiet_host_departures()  # idempotent
    target = logging.getLogger("mcp.server.streamable_http")

    def passes(message: str, error: BaseException) -> bool:
        record = target.makeRecord(
            target.name, logging.ERROR, __file__, 1, message, (), (type(error), error, None)
        )
        return all(f.filter(record) for f in target.filters if not isinstance(f, type))

    assert not passes("Error handling POST request", anyio.ClosedResourceError())
    assert not passes("Error in standalone SSE writer", anyio.BrokenResourceError())
    assert passes("Error handling POST request", RuntimeError("a real fault"))
    assert passes("Stateless session crashed", anyio.ClosedResourceError())
    assert sum(type(f).__name__ == "_HostDepartures" for f in target.filters) == 1
