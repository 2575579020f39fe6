"""Example MCP servers shipped with a2c-computer (run with ``python -m``)."""
