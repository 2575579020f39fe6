"""The HTTP / Engine.IO edge: everything that happens before a Socket.IO packet exists.

The version gate, HTTP long-polling, the oversize guard, open requests, the transport
options, uvicorn's access log and graceful shutdown. May import: the package's flat
modules (``_exceptions``, ``_settings``), ``_observe``, ``_relay._sio`` (the Socket.IO server
the edge mounts) and the ``_upstream`` fence; never ``_state`` or ``_cluster``.
"""
