"""The HTTP / Engine.IO edge: everything that happens before a Socket.IO packet exists.

The version gate, HTTP long-polling, the oversize guard, open requests, the transport
options, Engine.IO sessions under the Socket.IO server (``_sessions``: admission in time,
bounded queues), uvicorn's access log and graceful shutdown. May import: the package's flat
modules (``_exceptions``, ``_settings``), ``_observe``, ``_floods``, ``_relay._sio`` (the
Socket.IO server the edge mounts; ``_sessions`` is the layer below it and never imports
``_relay``) and the ``_upstream`` fence; never ``_state`` or ``_cluster``.
"""
