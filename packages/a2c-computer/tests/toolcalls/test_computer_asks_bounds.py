"""Tools that ask, made safe and truthful: the Computer bounds what its MCP servers ask
(requests per round and per call, web links only), tells the caller the real reason a
question was refused, and frees a server whose question was abandoned.

A real Server, a real Computer, the raw Agent ``alice`` speaking the wire by hand, and real
mcp 2 ``MCPServer`` test servers (``a2c_testkit.mcp_servers.pushy``, which asks too much or
badly, and ``asking``) over stdio or streamable HTTP under uvicorn.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2c_computer import Computer
from a2c_testkit.asking_agent import ALL, Caller, asking_office, only, text
from a2c_testkit.mcp_servers.http_server import serve_module_http
from a2c_testkit.server import RawClient

AUTO = {"auto_apply": True}


def streamable(name: str, url: str, **fields: Any) -> dict[str, Any]:
    return {"type": "streamable", "name": name, "default_tool_meta": AUTO,
            "server_parameters": {"url": f"{url}/mcp", "timeout": "PT10S"}, **fields}  # fmt: skip


@contextlib.asynccontextmanager
async def over_http(module: str, **computer: Any) -> AsyncIterator[tuple[Computer, RawClient]]:
    async with (
        serve_module_http(module, "--http", "0") as url,
        asking_office({module: streamable(module, url)}, **computer) as (box, alice),
    ):
        yield box, alice


# ------------------------------------------------------- the caller hears the reason


REFUSED = "elicitation/create refused by the A2C Computer"


@pytest.mark.parametrize(("case", "said"), [
    ("takes no input", REFUSED),
    ("takes no forms", REFUSED),
    ("the Agent refuses", "not today"),
    ("no back-channel", "back-channel"),
])  # fmt: skip
async def test_a_refused_question_over_http_is_reported_as_that_refusal(
    case: str, said: str
) -> None:
    """A tool of the SDK's ``MCPServer`` that lets its question's refusal escape fails the
    call with a JSON-RPC error; over streamable HTTP (no credentials configured) the caller
    hears that refusal (4003), never "needs authorization" (4006)."""
    fields = {"mcp_era": "modern"} if case == "no back-channel" else {}
    takes = {"takes no input": None, "takes no forms": {"sampling": {}}}.get(case, ALL)
    async with serve_module_http("pushy", "--http", "0") as url:
        entry = streamable("pushy", url, **fields)
        async with asking_office({"pushy": entry}) as (_, alice):
            caller = Caller(alice, "blunt", takes=takes)
            answer = await caller.call()
            if case == "the Agent refuses":
                key, _ = only(answer)
                refusal = {"a2c_error": {"code": -1, "message": "not today"}}
                answer = await caller.answer({key: refusal})
            assert answer["isError"] is True, answer
            assert answer["meta"]["error_code"] == 4003, answer
            assert "auth_hint" not in answer["meta"]
            assert "needs authorization" not in text(answer)
            assert said in text(answer), answer
