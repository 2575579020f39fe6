"""The public surface of a2c_server is deliberate: changing it must change this test."""

import a2c_server
import a2c_testkit.server


def test_server_all_is_pinned() -> None:
    assert sorted(a2c_server.__all__) == sorted(
        [
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
            "ServerError",
            "ServerSettings",
            "RouteOutcome",
            "ServerMetrics",
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
    )
    for name in a2c_server.__all__:
        assert getattr(a2c_server, name) is not None


def test_server_exceptions_share_one_root() -> None:
    from a2c_protocol import A2CError

    assert issubclass(a2c_server.ServerError, A2CError)
    for cls in (
        a2c_server.AuthenticationError,
        a2c_server.SettingsError,
        a2c_server.StateConflictError,
        a2c_server.StoreUnavailableError,
    ):
        assert issubclass(cls, a2c_server.ServerError)


def test_server_testkit_helpers_are_exported() -> None:
    assert sorted(a2c_testkit.server.__all__) == [
        "RawClient",
        "RunningServer",
        "assert_registry_matches_rooms",
        "close_client",
        "connect_raw",
        "connect_refusal",
        "echo_computer",
        "joined_raw",
        "running_nodes",
        "running_server",
        "serving",
    ]
