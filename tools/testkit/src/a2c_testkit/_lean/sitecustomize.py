"""Started first by every interpreter the testkit spawns for a role (see ``processes.spawn``).

The workspace venv holds every role's dependencies and the test tools' too: a Computer started
from it imports ``redis`` (python-socketio looks for it) and ``trio`` (httpcore looks for it;
only selenium brings it), which a one-role install of ``a2c-computer`` does not have (nor does
an ``a2c-server`` install have ``aiohttp``). They cost 0.2-0.4 s of CPU per process start, on
a 2-core machine where the suite is CPU-bound.
The names in ``A2C_TESTKIT_ABSENT`` are made absent here, as in that install: an import of
one raises ``ImportError``, which those libraries handle by going without it.
"""

import os
import sys

for _name in filter(None, os.environ.get("A2C_TESTKIT_ABSENT", "").split(",")):
    sys.modules.setdefault(_name, None)  # type: ignore[arg-type]
