"""The Agent's session with a Server: connection parameters, the lifecycle table, the
Socket.IO link and office membership.

May import the flat core, ``_rpc._inflight`` and the ``_upstream`` fence; never ``_cli``.
"""
