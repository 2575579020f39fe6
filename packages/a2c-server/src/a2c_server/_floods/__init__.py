"""Floods: what one connection may cost the others (issues 40, 41, 42).

* :mod:`._outbox`: the per-process budget for queued output bytes.
"""
