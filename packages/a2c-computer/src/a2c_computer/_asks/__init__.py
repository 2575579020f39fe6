"""Input requests of MCP servers during tool calls, relayed to the calling Agent.

The Computer's side of the extension in docs/compatibility.md (*input requests*): an MCP
server that asks for the user's input (elicitation) or the model's (sampling) while a tool
runs, in either MCP era, gets its answer from the Agent whose call declared ``a2c_input``;
roots are answered here from the configuration. The pure rules (shapes, the binding of a
state to its call, expiry) are the core's (``a2c_protocol._input``). May import ``_mcp``,
``_toolcalls``, ``_config`` and ``_observe``; never ``_server_link``.
"""
