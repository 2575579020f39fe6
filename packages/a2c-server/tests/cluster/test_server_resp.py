"""The cluster's own RESP packing writes what redis-py would for the same commands."""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio.connection import Connection

from a2c_server._cluster._resp import pack_command, pack_commands, pack_publish

COMMANDS: list[tuple[Any, ...]] = [
    ("PING",),
    ("EVALSHA", "0" * 40, 1, "{a2c}", "box-ü"),
    ("GET", b"raw\r\nbytes"),
    ("SET", "k", "", "PX", 1500),
    ("INCRBY", "k", -7),
]


@pytest.mark.parametrize("command", COMMANDS, ids=repr)
def test_a_command_is_packed_as_redis_py_packs_it(command: tuple[Any, ...]) -> None:
    assert pack_command(command) == b"".join(Connection().pack_command(*command))


def test_a_pipeline_and_a_publish_batch_are_packed_in_order() -> None:
    reference = b"".join(Connection().pack_commands(COMMANDS))
    assert pack_commands(COMMANDS) == reference
    batch: list[tuple[str, str | bytes]] = [("ch", "zwölf"), ("kanäl", b"{}"), ("c", "")]
    expected = b"".join(Connection().pack_commands([("PUBLISH", c, p) for c, p in batch]))
    assert pack_publish(batch) == expected


@pytest.mark.parametrize("arg", [1.5, True, None, ["list"]], ids=repr)
def test_an_argument_redis_py_would_encode_otherwise_is_refused(arg: Any) -> None:
    with pytest.raises(TypeError):
        pack_command(("SET", "k", arg))
