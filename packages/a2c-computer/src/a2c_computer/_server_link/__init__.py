"""The Computer's link to a Server: the Socket.IO client and what it answers.

The link itself, its ``client:*`` handlers, the calls it is running, connection decisions,
the ``--allow-agent`` list, the answers that always fit an ack, reconnecting and the re-join
wait while its name is held (``_rejoin``) and the shapes of a 0.4 session (``_line04``).
Knows the core only through :class:`._port.CorePort` (never imports ``_computer``). May
import ``_announcer``, ``_servers``, ``_bundles``, ``_toolcalls``, ``_blobs``, ``_skills``,
``_config``, ``_observe`` and ``_exceptions``; only ``_app`` imports this room (the core
runs without a Server).
"""
