"""``python -m a2c_computer._cli`` is the ``a2c-computer`` command (tests start it this way)."""

import sys

from ._main import main

sys.exit(main())
