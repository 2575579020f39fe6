"""Floods: what one connection may cost the others.

* :mod:`._outbox`: the per-process budget for queued output bytes.
* :mod:`._trim`: the freed heap handed back to the OS after drops (glibc).
* :mod:`._heap`: the start-up heap frozen, so full collections stay short under floods.
* :mod:`._refusals`: refusals logged once per cause and address per interval, counted.
* :mod:`._accesslog`: uvicorn's per-request INFO lines, held to one per kind and address.
* :mod:`._inbound`: the per-connection budget on every packet a client sends.
* :mod:`._pacing`: new handshakes paced while connects are refused in numbers.
* :mod:`._collector`: their ``/metrics``.

The Engine.IO hooks that use them live in the fence (:mod:`a2c_server._upstream`).
"""
