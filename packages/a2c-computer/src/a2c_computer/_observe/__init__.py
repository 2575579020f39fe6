"""Observability of the Computer: its logs (redaction, formats), MCP stderr, metrics, tracing.

May import ``_mcp`` and the core (``_computer``, for the metrics it reads); every other room
may import it, so it never imports ``_server_link`` or ``_toolcalls``.
"""
