"""Keep the garbage collector's full passes short while connects are refused by the thousand.

Every refused connect leaves a few reference cycles behind (its Engine.IO socket, tasks,
a refusal exception with its traceback), so under a flood the collector's oldest
generation fills and its full pass runs every few seconds. A full pass walks every
tracked object, including the ~100,000 that the imported modules and the app hold for the
life of the process: measured on ``a2c-server`` under a tokenless connect flood, full
passes of 95-110 ms, which every honest call caught in one waited out (p99 x8-x20 of
baseline). ``gc.freeze()`` after start-up moves those objects where the
collector no longer walks them, and a full pass only sees what was made since.

The ``a2c-server`` command calls it once, when the app and uvicorn's protocol modules
are loaded; an application embedding the Server in its own process decides for itself.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_startup_heap"]


def freeze_startup_heap() -> int:
    """Collect once, then exempt every object alive now from later collections.

    Returns how many objects were frozen. Objects that die later are still freed by
    reference counting; only cycles among them would stay (start-up objects are long-lived).
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
