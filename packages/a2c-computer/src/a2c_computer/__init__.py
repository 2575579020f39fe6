"""a2c_computer."""

from ._version import __version__

__all__ = ["__version__"]
