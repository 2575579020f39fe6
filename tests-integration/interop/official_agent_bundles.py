"""An official a2c-smcp 0.4.2 Agent asking a Computer about its MCP servers by bundle_id.

Usage: python official_agent_bundles.py URL OFFICE NAME COMPUTER BUNDLE
Joins OFFICE with the SDK's DefaultAgentAuthProvider, lists COMPUTER's tools, calls
``BUNDLE__echo``, reads the config and the resources of BUNDLE, then asks the resources of
the display name ``Files`` (no bundle has it); prints one JSON object with each answer.
"""

import asyncio
import json
import sys

from a2c_smcp.agent import AsyncSMCPAgentClient, DefaultAgentAuthProvider, SMCPProtocolError

# this folder is on sys.path when the script runs: share the join wait and the dumps
from official_agent import plain, until_joined


async def main(url, office, name, computer, bundle):
    client = AsyncSMCPAgentClient(
        auth_provider=DefaultAgentAuthProvider(agent_id=name, office_id=office)
    )
    await client.connect_to_server(url)
    await client.join_office(office, name, namespace="/smcp")
    out = {"tools": (await until_joined(client, computer))["tools"]}
    call = await client.emit_tool_call(computer, f"{bundle}__echo", {"text": "hello"}, 30)
    out["call"] = plain(call)
    out["config"] = plain(await client.get_config_from_computer(computer))
    out["resources"] = plain(await client.get_resources(computer, bundle))
    try:
        await client.get_resources(computer, "Files")
        out["by_name"] = None
    except SMCPProtocolError as exc:
        out["by_name"] = {"code": exc.code, "payload": dict(exc.payload)}
    await client.disconnect()
    print(json.dumps(out))


asyncio.run(main(*sys.argv[1:6]))
