"""a2c_demo (private): the one-command tour of the A2C-SMCP triangle."""

from ._main import main, run_demo

__all__ = ["main", "run_demo"]
