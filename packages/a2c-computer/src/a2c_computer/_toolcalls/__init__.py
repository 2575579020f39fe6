"""Tool calls of the core: dispatch, confirmation, the MCP call, its result.

The call runner (:mod:`._calls`, the one place a tool call is finished), dispatch and
timeouts, confirmation, one ``tools/call`` on an MCP server, calls to a server that is
down, argument encoding, protocol extensions and VRL. May import ``_mcp``, ``_config``,
``_desk``, ``_observe``, ``_oauth``, ``_asks`` (the input relay), the tool catalog
(``_catalog``, ``_registry``) and the fleet (``_servers``); never ``_server_link``.
"""
