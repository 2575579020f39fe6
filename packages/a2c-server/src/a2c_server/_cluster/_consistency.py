"""Does the registry agree with python-socketio's rooms? (diagnostics and tests)

The office registry (the :class:`~a2c_server.StateStore`) decides who may talk to whom; the
Socket.IO rooms decide who *receives* an office's notifications. If they ever disagree a
client can listen to an office the registry says it is not in. This check compares the two
for every session connected to this process.
"""

from __future__ import annotations

import socketio

from a2c_server._state._store import StateStore
from a2c_server._upstream import rooms_of

__all__ = ["registry_mismatches"]


async def registry_mismatches(
    sio: socketio.AsyncServer, store: StateStore, namespace: str
) -> list[str]:
    """Every disagreement between ``store`` and the rooms of ``namespace`` (empty: none).

    A connected sid must have a registry entry, and its rooms (besides its own) must be
    exactly the entry's office. Sessions still in their handshake or teardown are skipped.
    """
    manager = sio.manager
    rooms = rooms_of(sio, namespace)
    problems: list[str] = []
    for sid in list(rooms.get(None, {})):
        if not manager.is_connected(sid, namespace):
            continue
        joined = {room for room, members in rooms.items()
                  if room is not None and room != sid and sid in members}  # fmt: skip
        member = await store.get(sid)
        if member is None:
            problems.append(f"sid {sid} is connected but not registered (rooms {sorted(joined)})")
            continue
        expected = {member.office_id} if member.office_id is not None else set()
        if joined != expected:
            problems.append(f"sid {sid} is in rooms {sorted(joined)}, registry says {expected}")
    return problems
