"""a2c_testkit (private)."""

# Server helpers (a2c_testkit.server).
from .server import RawClient, RunningServer, close_client, connect_raw, running_server

__all__ = ["RawClient", "RunningServer", "close_client", "connect_raw", "running_server"]

# Scripted test Computer (a2c_testkit.scripted_computer).
from .scripted_computer import ReceivedEvent, ScriptedComputer, ScriptedHandler

__all__ += ["ReceivedEvent", "ScriptedComputer", "ScriptedHandler"]
