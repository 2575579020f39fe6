"""``python -m a2c_server`` runs the ``a2c-server`` command."""

from ._cli import main

main()
