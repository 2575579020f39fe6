"""Who may connect and where they may sit: auth providers, identities and grants.

``a2c_server._auth`` keeps every name the former single module had; the JWT provider
imports PyJWT only when one is built (the ``a2c-server[jwt]`` extra).
"""

from ._base import (
    AllowAllAuth,
    AuthProvider,
    AuthRequest,
    Identity,
    JoinAuthorizer,
    SharedTokenAuth,
    is_loopback_host,
)
from ._grants import (
    GRANT_CLAIM,
    Grant,
    GrantError,
    check_office_pattern,
    connect_problem,
    join_problem,
    office_matches,
)
from ._jwt import JwksKeys, JwtAuth, require_jwt_support

__all__ = [
    "GRANT_CLAIM",
    "AllowAllAuth",
    "AuthProvider",
    "AuthRequest",
    "Grant",
    "GrantError",
    "Identity",
    "JoinAuthorizer",
    "JwksKeys",
    "JwtAuth",
    "SharedTokenAuth",
    "check_office_pattern",
    "connect_problem",
    "is_loopback_host",
    "join_problem",
    "office_matches",
    "require_jwt_support",
]
