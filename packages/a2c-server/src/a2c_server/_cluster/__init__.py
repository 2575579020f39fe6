"""The cluster on Redis: several Server nodes behind one address.

The Redis state store and subjects, multi-node wiring, node liveness, cross-node publish,
the Redis connection mux, remote calls and the registry consistency check. May import
``_state`` (the protocol it implements), ``_observe``, ``_exceptions``, ``_settings`` and the
``_upstream`` fence (redis-py internals); never ``_relay`` or ``_edge``.
"""
