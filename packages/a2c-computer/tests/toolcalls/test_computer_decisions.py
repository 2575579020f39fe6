"""Connection decisions of the link (pure)."""

from __future__ import annotations

import json

from a2c_computer._server_link._decisions import ConnectVerdict, judge_refusal
from a2c_protocol import ProtocolVersionError

BODY_4008 = json.dumps(
    {
        "code": 4008,
        "message": "Protocol version mismatch",
        "server_version": "1.0.0",
        "client_version": "0.2.0",
        "min_supported": "1.0.0",
        "max_supported": "1.0.99",
    }
)


def test_version_refusal_from_the_body() -> None:
    verdict, error = judge_refusal(400, {"X-A2C-Error-Code": "4008"}, BODY_4008)
    assert verdict is ConnectVerdict.VERSION_REFUSED
    assert isinstance(error, ProtocolVersionError)
    assert (error.server_version, error.min_supported, error.max_supported) == (
        "1.0.0",
        "1.0.0",
        "1.0.99",
    )


def test_version_refusal_from_the_header_when_the_body_is_unreadable() -> None:
    verdict, error = judge_refusal(400, {"x-a2c-error-code": "4008"}, b"<html>")
    assert verdict is ConnectVerdict.VERSION_REFUSED and isinstance(error, ProtocolVersionError)


def test_other_outcomes() -> None:
    assert judge_refusal(None, {}, b"")[0] is ConnectVerdict.TRANSIENT
    assert judge_refusal(200, {}, b"0{}")[0] is ConnectVerdict.TRANSIENT
    assert judge_refusal(503, {}, b"busy")[0] is ConnectVerdict.TRANSIENT
    verdict, error = judge_refusal(401, {}, json.dumps({"code": 401, "message": "bad token"}))
    assert verdict is ConnectVerdict.REFUSED and error is not None and error.code == 401


def test_a_namespace_refusal_with_an_error_payload_is_final() -> None:
    from a2c_computer._server_link._decisions import judge_namespace_refusal

    wrapped = {"message": "bad", "data": {"code": 401, "message": "invalid token"}}
    verdict, error = judge_namespace_refusal(wrapped)
    assert verdict is ConnectVerdict.REFUSED and error is not None and error.code == 401
    version = {"message": "x", "data": {"code": 4008, "message": "version"}}
    assert judge_namespace_refusal(version)[0] is ConnectVerdict.VERSION_REFUSED
    crashed = {"message": "x", "data": {"code": 500, "message": "auth provider crashed"}}
    assert judge_namespace_refusal(crashed)[0] is ConnectVerdict.TRANSIENT
    assert judge_namespace_refusal("free text")[0] is ConnectVerdict.TRANSIENT
    assert judge_namespace_refusal(None) == (ConnectVerdict.TRANSIENT, None)


def test_only_a_401_with_renewable_credentials_is_worth_waiting_out() -> None:
    from a2c_computer._server_link._decisions import refusal_may_pass_later
    from a2c_protocol import RemoteError

    expired = RemoteError("Authentication failed: token expired", code=401)
    forbidden = RemoteError("Grant does not allow office o", code=403)
    assert refusal_may_pass_later(expired, credentials_renew=True)
    assert not refusal_may_pass_later(expired, credentials_renew=False)
    assert not refusal_may_pass_later(forbidden, credentials_renew=True)
    assert not refusal_may_pass_later(None, credentials_renew=True)


def test_reconnect_refusals_a_held_name_waits_a_token_may_renew_the_rest_are_final() -> None:
    from a2c_computer import ServerRefusedError
    from a2c_computer._server_link._decisions import ReconnectRefusal, judge_reconnect_refusal
    from a2c_protocol import UnauthorizedError

    def judge(exc: ServerRefusedError, renew: bool = False) -> ReconnectRefusal:
        return judge_reconnect_refusal(exc, credentials_renew=renew)

    held = ServerRefusedError("x", join_reason="Name 'box' is already taken in office 'o1'")
    assert judge(held) is ReconnectRefusal.NAME_HELD
    away = ServerRefusedError("x", join_reason="Registry unavailable, try again later")
    assert judge(away) is ReconnectRefusal.NAME_HELD
    forbidden = ServerRefusedError("x", join_reason="office 'o1' is not granted to this token")
    assert judge(forbidden) is ReconnectRefusal.FINAL
    late = ServerRefusedError("x", UnauthorizedError("token expired"))
    assert judge(late, renew=True) is ReconnectRefusal.TOKEN
    assert judge(late, renew=False) is ReconnectRefusal.FINAL
