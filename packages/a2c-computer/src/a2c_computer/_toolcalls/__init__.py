"""Tool calls of the core: dispatch, confirmation, the MCP call, its result.

Dispatch and timeouts, confirmation, one ``tools/call`` on an MCP server, calls to a server
that is down, argument encoding, protocol extensions and VRL. May import ``_mcp``,
``_config``, ``_desk``, ``_observe``, ``_oauth`` and the core's shared base (``_core``,
``_registry``); never ``_server_link``.
"""
