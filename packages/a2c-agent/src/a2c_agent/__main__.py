"""``python -m a2c_agent`` runs the ``a2c-agent`` command."""

from ._cli._main import main

raise SystemExit(main())
