"""The landing dir: where ``client:put_blob`` uploads of Agents are written.

:class:`LandingSettings` (what the operator chose), :class:`LandingStore` (the uploads in
progress and their rules), the budget of what the dir holds, its file-system side (never
through a link inside it), the ``run`` flags and the ``landed`` command.
"""

from ._cmd import add_landed_parser, run_landed
from ._names import PARTIAL_DIR, sanitize
from ._options import LANDING_OPTIONS, add_landing_flags, describe_landing, landing_settings
from ._settings import LandingSettings
from ._store import LandingStore, run_reaper

__all__ = [
    "LANDING_OPTIONS",
    "PARTIAL_DIR",
    "LandingSettings",
    "LandingStore",
    "add_landed_parser",
    "add_landing_flags",
    "describe_landing",
    "landing_settings",
    "run_landed",
    "run_reaper",
    "sanitize",
]
