"""The ``a2c-computer`` command: parsing, and one module per subcommand.

The room holds the entry point (``_main.py``: ``main``, the ``run`` command and its
signals, reload and shutdown), the parser (``_args.py``), where each value comes from and
how it is checked (``_env.py``: environment defaults, converters), and the ``check``
(``_check_cmd.py``), ``skills`` (``_skills_cmd.py``) and ``convert`` (``_convert_cmd.py``)
subcommands. ``auth`` lives with OAuth (``a2c_computer._oauth._cmd``).
Nothing outside the CLI imports from here except the console script and ``__main__``.
"""

from ._main import main

__all__ = ["main"]
