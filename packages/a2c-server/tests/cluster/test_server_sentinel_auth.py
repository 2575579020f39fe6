"""``--redis redis+sentinel://``: the URL, the passwords (URL or environment), never logged.

The end-to-end test runs a password-protected primary and replica behind three sentinels
that require their own password; one node has the primary's password in its URL, the
other gets both from the environment. A call crosses the nodes before and after ``kill -9``
of the primary, and neither password appears in either node's log.
"""

from __future__ import annotations

import secrets
import uuid
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from a2c_agent import AsyncAgent, result_text
from a2c_protocol import A2CError
from a2c_server import ServerSettings
from a2c_server._cli import settings_from_args
from a2c_server._cluster._redis_url import parse_redis_target
from a2c_server._exceptions import SettingsError
from a2c_server._observe._logs import server_secrets
from a2c_testkit.redis_sentinel import echo_office, redis_sentinel
from a2c_testkit.triangle import eventually, server_process


def test_sentinel_urls_parse_with_their_passwords() -> None:
    target = parse_redis_target("redis+sentinel://u:p%40ss@h1:26379,[::1]:26380/2/svc",
                                sentinel_password="sp")  # fmt: skip
    assert target.sentinels == (("h1", 26379), ("::1", 26380))
    assert (target.service, target.db, target.username) == ("svc", 2, "u")
    assert (target.password, target.sentinel_password) == ("p@ss", "sp")
    assert target.primary_options() == {"db": 2, "username": "u", "password": "p@ss"}
    assert target.sentinel_options() == {"password": "sp"}
    assert "p@ss" not in repr(target) and "sp'" not in repr(target)
    # The environment's password applies where the URL has none.
    plain = parse_redis_target("redis://h:1/0", password="envpw")
    assert plain.primary_options() == {"password": "envpw"}
    assert parse_redis_target("redis://:urlpw@h:1/0", password="envpw").primary_options() == {}
    for bad in ("redis+sentinel://h1/0/svc", "redis+sentinel://h1:1/svc",
                "redis+sentinel://h1:1/0", "redis+sentinel://h1:99999/0/svc"):  # fmt: skip
        with pytest.raises(ValueError):
            parse_redis_target(bad)


def test_sentinel_passwords_come_from_the_environment_and_are_redacted() -> None:
    url = "redis+sentinel://:urlsecret@127.0.0.1:26379,127.0.0.1:26380/0/a2c"
    settings = settings_from_args(
        ["--redis", url],
        {"A2C_SERVER_REDIS_SENTINEL_PASSWORD": "sentinelsecret",
         "A2C_SERVER_REDIS_PASSWORD": "primarysecret"},
    )  # fmt: skip
    assert settings.redis_url == url
    assert settings.redis_sentinel_password == "sentinelsecret"
    shown = repr(settings)
    assert "urlsecret" not in shown and "sentinelsecret" not in shown
    assert "primarysecret" not in shown
    assert {"urlsecret", "sentinelsecret", "primarysecret"} <= set(server_secrets(settings))
    with pytest.raises(SettingsError) as refused:
        ServerSettings(redis_url="redis+sentinel://:hidden@127.0.0.1/0/a2c")
    assert "hidden" not in str(refused.value) and "HOST:PORT" in str(refused.value)


async def _pong(agent: AsyncAgent) -> bool:
    try:
        return result_text(await agent.call_tool("box", "echo", {}, timeout=5)) == "pong"
    except (A2CError, OSError):
        return False


async def test_password_protected_primary_and_sentinels_through_a_failover(
    tmp_path: Path,
) -> None:
    password, sentinel_password = secrets.token_hex(12), secrets.token_hex(12)
    prefix = f"auth-{uuid.uuid4().hex[:8]}"
    office = f"o-{prefix}"
    with redis_sentinel(password=password, sentinel_password=sentinel_password) as deployment:
        hosts = deployment.url.split("//", 1)[1]
        with_password = f"redis+sentinel://:{password}@{hosts}"
        async with AsyncExitStack() as stack:
            common = ["--redis-prefix", prefix, "--node-ttl", "10"]
            n1 = await stack.enter_async_context(server_process(
                tmp_path, name="node-n1", extra_args=["--redis", with_password,
                                                      "--node-id", "n1", *common],
                env={"A2C_SERVER_REDIS_SENTINEL_PASSWORD": sentinel_password},
            ))  # fmt: skip
            n2 = await stack.enter_async_context(server_process(
                tmp_path, name="node-n2", extra_args=["--redis", deployment.url,
                                                      "--node-id", "n2", *common],
                env={"A2C_SERVER_REDIS_PASSWORD": password,
                     "A2C_SERVER_REDIS_SENTINEL_PASSWORD": sentinel_password},
            ))  # fmt: skip
            _, agent = await echo_office(stack, n2.url, n1.url, office)
            assert await _pong(agent)
            deployment.kill_primary()
            await eventually(lambda: deployment.primary_address() == deployment.replica_port,
                             timeout=60, what="the replica promoted")  # fmt: skip
            await eventually(lambda: _pong(agent), timeout=60, what="calls after the failover")
            logs = n1.process.logs() + n2.process.logs()
    assert "registered" in logs  # the logs were read
    assert password not in logs and sentinel_password not in logs
