"""A 2026-07-28 host's parked call goes when its office call ends, not at the bridge's own
``--input-timeout``: the Computer gave the question up (or the Agent's round timed out),
and a late retry of the host hears "unknown or expired" at once."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import MCPError, types

from a2c_agent._bridge._input import HostInputs
from a2c_agent._bridge._parked import binding_of
from a2c_protocol import InputCapabilities, InputResponse
from a2c_protocol._input import input_request_of


async def test_a_parked_call_whose_office_call_ends_is_dropped_at_once() -> None:
    inputs = HostInputs(timeout=300.0)
    given_up = asyncio.Event()

    async def office_call(ask: Any) -> dict[str, Any]:
        question = input_request_of("q", {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {}}}})  # fmt: skip
        asking: asyncio.Task[InputResponse] = asyncio.ensure_future(ask(question))
        await given_up.wait()  # the Computer gives the question up meanwhile
        asking.cancel()
        raise RuntimeError("the Computer gave the call up")

    # A 2026-07-28 request's context, as far as the parking reads it: no roots declared.
    ctx: Any = SimpleNamespace(session=SimpleNamespace(client_capabilities=None))
    first = await inputs.start(ctx, "box__greet", {}, InputCapabilities(), office_call)
    assert isinstance(first, types.InputRequiredResult)
    assert first.request_state is not None and len(inputs._lot) == 1
    given_up.set()
    for _ in range(10):
        await asyncio.sleep(0)
    assert len(inputs._lot) == 0, "the parked copy outlived its office call"
    with pytest.raises(MCPError, match="unknown or expired"):
        await inputs.resume(first.request_state, binding_of("box__greet", {}), {})
    inputs.close()
