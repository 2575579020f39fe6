"""Office state and its pure rules: who is in which office, and what they may do.

The ``StateStore`` protocol and its in-memory store, ``Offices``, subjects, the protocol
rules, limits, the per-connection rate limit and join access. No I/O besides the store;
may import ``_exceptions``, ``_auth``, ``_observe`` (logs, audit); never ``_relay``,
``_edge`` or ``_cluster``.
"""
