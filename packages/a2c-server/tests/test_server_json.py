"""The Server's packet codec writes exactly what the standard library and python-socketio write."""

from __future__ import annotations

import json
import math
from typing import Any

import socketio
from hypothesis import given
from hypothesis import strategies as st

from a2c_server import _json
from a2c_server._relay._packet import SmcpPacket

COMPACT = (",", ":")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.sampled_from([1e-05, 2.5e-07, 1e16, 1e22, -0.0, math.nan, math.inf, -math.inf])
    | st.text()
    | st.text(alphabet=st.characters(max_codepoint=127)),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=25,
)


@given(json_values)
def test_server_json_dumps_is_byte_identical_to_the_standard_library(value: Any) -> None:
    assert _json.dumps(value, separators=COMPACT) == json.dumps(value, separators=COMPACT)


def test_server_json_covers_the_cases_orjson_writes_differently() -> None:
    cases: list[Any] = [
        {"text": "héllo 文字 \udcff"},  # non-ASCII and a lone surrogate
        {"del": "a\x7fb"},  # DEL is ASCII, but the standard library escapes it
        {"priority": 1e-05, "small": 2.5e-07, "tiny": 5e-324},
        {"nan": math.nan, "inf": math.inf},
        {"big": 2**64, "neg": -(2**63) - 1},
        {1: "integer key"},
        {"req_id": "r" * 50, "timeout": 30, "params": {"text": "hi"}, "meta": None},
    ]
    for case in cases:
        assert _json.dumps(case, separators=COMPACT) == json.dumps(case, separators=COMPACT)


def test_server_json_other_arguments_use_the_standard_library() -> None:
    value = {"b": 1, "a": [1.5, "x"]}
    assert _json.dumps(value) == json.dumps(value)
    assert _json.dumps(value, sort_keys=True, indent=2) == json.dumps(
        value, sort_keys=True, indent=2
    )
    assert _json.loads('{"n": 123456789012345678901234567890}') == {
        "n": 123456789012345678901234567890
    }


def test_server_json_uses_orjson_where_installed() -> None:
    assert _json.FAST


class _StdlibPacket(socketio.packet.Packet):  # type: ignore[misc]
    json = json


_with_bytes = st.recursive(
    json_values | st.binary(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=10,
)


@given(
    st.sampled_from([socketio.packet.EVENT, socketio.packet.ACK]),
    _with_bytes,
    st.sampled_from([None, "/", "/smcp"]),
    st.none() | st.integers(min_value=0, max_value=2**40),
)
def test_server_packet_encodes_exactly_as_python_socketio(
    kind: int, value: Any, namespace: str | None, ack_id: int | None
) -> None:
    data = ["client:tool_call", value] if kind == socketio.packet.EVENT else [value]
    ours = SmcpPacket(kind, data=data, namespace=namespace, id=ack_id)
    theirs = _StdlibPacket(kind, data=data, namespace=namespace, id=ack_id)
    assert ours.packet_type == theirs.packet_type
    assert ours.encode() == theirs.encode()


def test_server_packet_keeps_bytes_as_attachments() -> None:
    data = ["client:blob_chunk", {"chunk": b"\x00\x01", "seq": 1}]
    ours = SmcpPacket(socketio.packet.EVENT, data=data, namespace="/smcp", id=7)
    assert ours.packet_type == socketio.packet.BINARY_EVENT
    assert ours.encode() == [
        '51-/smcp,7["client:blob_chunk",{"chunk":{"_placeholder":true,"num":0},"seq":1}]',
        b"\x00\x01",
    ]


def test_server_packet_decodes_as_python_socketio() -> None:
    text = '2/smcp,12["client:tool_call",{"req_id":"r","params":{"t":"héllo"}}]'
    ours = SmcpPacket(encoded_packet=text)
    theirs = _StdlibPacket(encoded_packet=text)
    assert (ours.packet_type, ours.namespace, ours.id, ours.data) == (
        theirs.packet_type, theirs.namespace, theirs.id, theirs.data,
    )  # fmt: skip
    # A decoded packet re-encodes through python-socketio's own path, unchanged.
    assert ours.encode() == theirs.encode()
