"""An official a2c-smcp Computer (0.2.2 or 0.4.2), run by the interop tests in its own venv.

Usage: python official_computer.py URL OFFICE NAME MCP_PYTHON
Serves the testkit's ``plain`` MCP server (started with MCP_PYTHON, the workspace's python),
connects with the SDK's defaults (no auth), joins OFFICE as NAME, prints ``JOINED`` and
stays until it is stopped. Only the SDK's public classes are used, as its README shows.
"""

import asyncio
import sys

from a2c_smcp.computer.computer import Computer
from a2c_smcp.computer.mcp_clients.model import StdioServerConfig
from a2c_smcp.computer.socketio.client import SMCPComputerClient
from mcp import StdioServerParameters


async def main(url: str, office: str, name: str, mcp_python: str) -> None:
    plain = StdioServerConfig(
        name="plain",
        server_parameters=StdioServerParameters(
            command=mcp_python, args=["-m", "a2c_testkit.mcp_servers.plain"]
        ),
        # No one at this Computer confirms calls: let them run.
        default_tool_meta={"auto_apply": True},
    )
    async with Computer(name=name, mcp_servers={plain}) as computer:
        client = SMCPComputerClient(computer=computer)
        await client.connect(url)
        await client.join_office(office)
        print("JOINED", flush=True)
        await asyncio.Event().wait()


asyncio.run(main(*sys.argv[1:5]))
