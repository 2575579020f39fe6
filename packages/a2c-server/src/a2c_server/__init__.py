"""a2c_server: the A2C-SMCP 0.2 signaling Server.

Run it with the ``a2c-server`` command, or build the ASGI app yourself::

    import uvicorn
    from a2c_server import ServerSettings, create_app

    uvicorn.run(create_app(ServerSettings(host="127.0.0.1", port=8000)), port=8000)

Agents and Computers connect to ``http://host:port/?a2c_version=0.2.0`` (Engine.IO path
``/socket.io/``, namespace ``/smcp``) with ``auth={"role": "agent" | "computer", ...}``.
"""

from ._app import A2CServerApp, create_app
from ._auth import (
    AllowAllAuth,
    AuthProvider,
    AuthRequest,
    Grant,
    Identity,
    JoinAuthorizer,
    JwksKeys,
    JwtAuth,
    SharedTokenAuth,
)
from ._cluster._consistency import registry_mismatches
from ._edge._gate import VersionGate
from ._exceptions import (
    AuthenticationError,
    ServerError,
    SettingsError,
    StateConflictError,
    StoreUnavailableError,
)
from ._observe._metrics import RouteOutcome, ServerMetrics
from ._settings import ServerSettings
from ._state._offices import Broadcast, MembershipOutcome, Offices
from ._state._rules import Member
from ._state._store import MemoryStateStore, StateStore, StoreStats
from ._version import __version__

__all__ = [
    "A2CServerApp",
    "AllowAllAuth",
    "AuthProvider",
    "AuthRequest",
    "AuthenticationError",
    "Broadcast",
    "Grant",
    "Identity",
    "JoinAuthorizer",
    "JwksKeys",
    "JwtAuth",
    "Member",
    "MembershipOutcome",
    "MemoryStateStore",
    "Offices",
    "RouteOutcome",
    "ServerError",
    "ServerMetrics",
    "ServerSettings",
    "SettingsError",
    "SharedTokenAuth",
    "StateConflictError",
    "StateStore",
    "StoreStats",
    "StoreUnavailableError",
    "VersionGate",
    "__version__",
    "create_app",
    "registry_mismatches",
]
