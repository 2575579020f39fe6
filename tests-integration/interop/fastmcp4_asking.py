"""A FastMCP 4 server whose tools ask the user with ``ctx.elicit``, as its authors write them.

Run by the integration tests with the python of a throwaway venv holding ``fastmcp==4.1.6``
(:func:`a2c_testkit.official.fastmcp_venv`), as a stdio MCP server of our Computer; it
imports nothing of this workspace.

* ``greet``: a free-text answer (``response_type=str``) -> ``hello <name>`` or
  ``greet:<action>``;
* ``pick_colour``: a choice (``response_type=["red", "green", "blue"]``) ->
  ``colour:<choice>`` or ``colour:<action>``.
"""

from fastmcp import Context, FastMCP

mcp = FastMCP("a2c-test-fastmcp4")


@mcp.tool
async def greet(ctx: Context) -> str:
    """Ask the user's name."""
    result = await ctx.elicit("What is your name?", response_type=str)
    if result.action == "accept":
        return f"hello {result.data}"
    return f"greet:{result.action}"


@mcp.tool
async def pick_colour(ctx: Context) -> str:
    """Ask the user to choose a colour."""
    result = await ctx.elicit("Which colour?", response_type=["red", "green", "blue"])
    if result.action == "accept":
        return f"colour:{result.data}"
    return f"colour:{result.action}"


if __name__ == "__main__":
    mcp.run(show_banner=False)
