"""One Server, two protocol lines: the gate takes 0.2.x and 0.4.x, ``--protocols`` narrows it.

A refused client still gets the six-key 4008 body (the range of the nearest served line)
plus ``a2c_supported_ranges`` listing every accepted range.
"""

from __future__ import annotations

import json

import httpx
import pytest

from a2c_server import ServerSettings, SettingsError
from a2c_server._edge._gate import check_version_query
from a2c_testkit.server import running_server

RANGE_02 = {"min_supported": "0.2.0", "max_supported": "0.2.999"}
RANGE_04 = {"min_supported": "0.4.0", "max_supported": "0.4.999"}


@pytest.mark.parametrize(
    ("protocols", "client", "accepted"),
    [
        (("0.2", "0.4"), "0.2.0", True),
        (("0.2", "0.4"), "0.4.2", True),
        (("0.2", "0.4"), "0.4.999", True),
        (("0.2", "0.4"), "0.3.0", False),
        (("0.2", "0.4"), "0.5.0", False),
        (("0.2",), "0.4.2", False),
        (("0.4",), "0.2.3", False),
        (("0.4",), "0.4.0", True),
    ],
)
def test_the_gate_serves_the_configured_lines(
    protocols: tuple[str, ...], client: str, accepted: bool
) -> None:
    settings = ServerSettings(protocols=protocols)
    refusal = check_version_query(f"a2c_version={client}", settings.served_versions)
    assert (refusal is None) is accepted


def test_a_refusal_names_the_nearest_line_and_every_range() -> None:
    served = ServerSettings().served_versions
    assert served == ("0.2.3", "0.4.2")
    refusal = check_version_query("a2c_version=0.5.1", served)
    assert refusal is not None
    body = json.loads(refusal.body)
    assert body == {
        "code": 4008, "message": "Protocol version mismatch", "server_version": "0.4.2",
        "client_version": "0.5.1", "min_supported": "0.4.0", "max_supported": "0.4.999",
        "a2c_supported_ranges": [RANGE_02, RANGE_04],
    }  # fmt: skip
    older = check_version_query("a2c_version=0.1.0", served)
    assert older is not None
    assert json.loads(older.body)["max_supported"] == "0.2.999"


def test_a_pinned_version_outside_the_lines_is_served_alone() -> None:
    assert ServerSettings(protocol_version="0.3.0").served_versions == ("0.3.0",)
    assert ServerSettings(protocol_version="0.2.0").served_versions == ("0.2.0", "0.4.2")
    assert ServerSettings(protocols="0.4").served_versions == ("0.4.2",)
    with pytest.raises(SettingsError, match="protocols"):
        ServerSettings(protocols="0.2,0.9")


async def test_a_0_4_client_opens_a_session_and_a_narrowed_server_refuses_it() -> None:
    for protocols, status in ((("0.2", "0.4"), 200), (("0.2",), 400)):
        async with running_server(ServerSettings(protocols=protocols)) as srv:
            url = f"{srv.url}/{srv.socketio_path}/?EIO=4&transport=polling&a2c_version=0.4.2"
            async with httpx.AsyncClient(timeout=30) as http:
                response = await http.get(url)
            assert response.status_code == status
            if status == 400:
                assert response.json()["a2c_supported_ranges"] == [RANGE_02]
