"""An official a2c-smcp Agent (0.2.2 or 0.4.2), run by the interop tests in its own venv.

Usage: python official_agent.py URL OFFICE NAME COMPUTER
Connects with the SDK's DefaultAgentAuthProvider (as its README shows), joins OFFICE, then
lists COMPUTER's tools, calls the one whose name ends in ``echo``, calls a tool that does not
exist and asks for the resources of an MCP server that does not exist; prints one JSON
object with what each step returned.
"""

import asyncio
import json
import sys

from a2c_smcp.agent import AsyncSMCPAgentClient, DefaultAgentAuthProvider, SMCPProtocolError


def plain(value):
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


async def until_joined(client, computer):
    # join_office is a plain emit (no ack) in the SDK: ask until the Server has seated us
    # (until then the Server answers 4103, which 0.2.2 reports as a req_id mismatch).
    last = None
    for _ in range(600):
        try:
            return await client.get_tools_from_computer(computer)
        except (SMCPProtocolError, ValueError) as exc:
            last = exc
        await asyncio.sleep(0.1)
    raise RuntimeError(f"never joined: {last!r}")


async def main(url, office, name, computer):
    auth = DefaultAgentAuthProvider(agent_id=name, office_id=office)
    client = AsyncSMCPAgentClient(auth_provider=auth)
    await client.connect_to_server(url)
    await client.join_office(office, name, namespace="/smcp")
    out = {}
    tools = await until_joined(client, computer)
    out["tools"] = tools["tools"]
    echo = next(t["name"] for t in tools["tools"] if t["name"].endswith("echo"))
    out["call"] = plain(await client.emit_tool_call(computer, echo, {"text": "hello"}, 30))
    out["missing_tool"] = plain(await client.emit_tool_call(computer, "no_such_tool", {}, 30))
    # 0.2.2 has no get_config helper: ask through the client's own call().
    config = await client.call(
        "client:get_config",
        {"agent": name, "req_id": "cfg-1", "computer": computer},
        namespace="/smcp",
    )
    out["config"] = config
    try:
        await client.get_resources(computer, "no_such_server")
        out["missing_server"] = None
    except SMCPProtocolError as exc:
        out["missing_server"] = {"code": exc.code, "payload": dict(exc.payload)}
    await client.disconnect()
    print(json.dumps(out))


if __name__ == "__main__":  # the other scripts here import its helpers
    asyncio.run(main(*sys.argv[1:5]))
