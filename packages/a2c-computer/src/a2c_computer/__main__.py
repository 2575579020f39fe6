"""``python -m a2c_computer`` is the ``a2c-computer`` command."""

import sys

from ._cli import main

sys.exit(main())
