"""``a2c-agent mcp``: any MCP host becomes the office's Agent.

The bridge is an MCP server (stdio, or streamable HTTP) in front of one
:class:`~a2c_agent.AsyncAgent`. Its pure rules live in their own modules and are tested
alone: :mod:`._names` (served tool names), :mod:`._catalog` (the merged tool list),
:mod:`._results` (results, errors, progress), :mod:`._uris` (desktop window URIs),
:mod:`._args` (the flags). :mod:`._office` keeps the Agent in its office;
:mod:`._server` and :mod:`._http` are the thin MCP adapters and need the optional
``mcp`` dependency (``pip install 'a2c-agent[mcp]'``); nothing here imports it until the
command runs.
"""

from __future__ import annotations

from ._args import add_parser
from ._run import EXTRA_MISSING, main

__all__ = ["EXTRA_MISSING", "add_parser", "main"]
