"""An official a2c-smcp Agent (0.2.2 or 0.4.2) calling a tool that asks the user.

Usage: python official_agent_asks.py URL OFFICE NAME COMPUTER
Joins OFFICE as the official SDK's README shows, calls COMPUTER's tool whose name ends in
``greet`` (its MCP server asks with ``ctx.elicit``), prints one JSON object with the call's
answer as the SDK decoded it. Such an Agent never declares ``a2c_input``: it must get a tool
result, never an input-required answer.
"""

import asyncio
import json
import sys

from a2c_smcp.agent import AsyncSMCPAgentClient, DefaultAgentAuthProvider

# this folder is on sys.path when the script runs: share the join wait and the dumps
from official_agent import plain, until_joined


async def main(url, office, name, computer):
    auth = DefaultAgentAuthProvider(agent_id=name, office_id=office)
    client = AsyncSMCPAgentClient(auth_provider=auth)
    await client.connect_to_server(url)
    await client.join_office(office, name, namespace="/smcp")
    tools = await until_joined(client, computer)
    greet = next(t["name"] for t in tools["tools"] if t["name"].endswith("greet"))
    call = plain(await client.emit_tool_call(computer, greet, {}, 30))
    await client.disconnect()
    print(json.dumps({"tool": greet, "call": call}))


asyncio.run(main(*sys.argv[1:5]))
