"""The Socket.IO namespace ``/smcp`` and the relay of requests between Agents and Computers.

The namespace mixins (core, offices, forward, relay), the Socket.IO server and packet codec,
unknown events, the progress extension and the calls in flight. May import: ``_state``
(who is where, the pure rules), ``_observe``, ``_cluster._remote`` (the cross-node call
shape), ``_edge._gate``/``_edge._shutdown``, ``_auth``, ``_console`` (its observer) and
``_upstream``.
"""
