"""The request/response machinery: the Agent's requests to Computers and what comes back.

``client:get_*`` and ``client:tool_call`` with cancel, the skills/blobs facades, pulling and
draining blobs, the progress extension, calls in flight and their tracing. May import the
flat core (``_core``, ``_rules``, ``_types``, ``_exceptions``, ``_notify``, ``_skills``), the
fence ``_upstream`` and ``_session._lifecycle``; never ``_cli``.
"""
