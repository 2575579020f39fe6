"""Observability of the Server: metrics, logs, log-noise filters, the audit log, tracing.

Leaf room: it may import only the package's ``_settings`` and the protocol core, so every
other room can import it.
"""
