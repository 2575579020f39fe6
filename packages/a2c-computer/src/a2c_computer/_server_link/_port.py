"""What the link needs of the Computer's core: a small interface, not the core class.

The link translates Socket.IO events into these calls and tells the Server about the
changes the core announces; it never reaches into the core's parts.
"""

from __future__ import annotations

from typing import Protocol

from a2c_computer._announcer import UpdateListener
from a2c_computer._servers import ServerState
from a2c_computer._toolcalls._calls import ResultFinisher
from a2c_computer._toolcalls._extensions import CallExtras, InputAnswer
from a2c_protocol import CallToolResult, ComputerConfig, JsonObject, SMCPTool

__all__ = ["CorePort"]


class CorePort(Protocol):
    """The methods of :class:`~a2c_computer._computer.ComputerCore` the link calls."""

    @property
    def config(self) -> ComputerConfig: ...

    def tools(self) -> list[SMCPTool]: ...

    def tool_server(self, exposed_name: str) -> str | None: ...

    def server_states(self) -> dict[str, ServerState]: ...

    async def desktop(self, size: int | None = None, window: str | None = None) -> list[str]: ...

    async def list_resources(
        self, mcp_server: str, cursor: str | None = None
    ) -> tuple[list[JsonObject], str | None]: ...

    # The link always passes every option: none needs a default here.
    async def call_tool_round(
        self, tool_name: str, params: JsonObject | None, *, timeout: float, req_id: str | None,
        agent: str | None, finish: ResultFinisher | None, extras: CallExtras | None,
    ) -> CallToolResult | InputAnswer: ...  # fmt: skip

    def in_flight(self) -> list[str]: ...

    def cancel(self, req_id: str, reason: str = ...) -> bool: ...

    def input_agent_left(self, agent: str) -> None: ...

    def add_update_listener(self, listener: UpdateListener) -> None: ...

    def remove_update_listener(self, listener: UpdateListener) -> None: ...
