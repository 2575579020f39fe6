"""The Computer's link to a Server: the Socket.IO client and what it answers.

The link itself, its ``client:*`` handlers, the calls it is running, connection decisions,
the ``--allow-agent`` list and the answers that always fit an ack. May import the core
(``_computer``), ``_toolcalls``, ``_blobs``, ``_skills``, ``_config``, ``_observe`` and
``_exceptions``; only ``_app`` imports this room (the core runs without a Server).
"""
