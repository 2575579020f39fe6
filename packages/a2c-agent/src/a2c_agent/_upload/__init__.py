"""Uploads from the Agent to a Computer's landing dir (``client:put_blob``).

``_push`` (the chunked, ack-paced send, pure over an injected emit), ``_put`` (what
``AsyncAgent.put_blob`` runs) and ``_cli`` (``a2c-agent put``). Nothing is imported here:
the CLI's argument parsing must not load the Socket.IO client that ``_put`` needs.
"""
