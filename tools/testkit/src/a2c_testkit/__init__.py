"""a2c_testkit (private)."""

# Server helpers (a2c_testkit.server).
from .server import RunningServer, running_server

__all__ = ["RunningServer", "running_server"]

# Scripted test Computer (a2c_testkit.scripted_computer).
from .scripted_computer import ReceivedEvent, ScriptedComputer, ScriptedHandler  # noqa: E402

__all__ += ["ReceivedEvent", "ScriptedComputer", "ScriptedHandler"]
