"""Result-level markers (meta / _meta, old spellings) and the content-item blob sideband."""

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_protocol import (
    A2C_BLOB_HANDLE,
    A2C_CANCELLED,
    A2C_SHA256,
    A2C_TIMEOUT,
    A2C_TOTAL_SIZE,
    BlobSideband,
    CallToolResult,
    blob_sideband_of,
    cancel_reason_of,
    cancelled_result,
    from_wire,
    is_cancelled,
    is_timed_out,
    result_marker,
    timeout_result,
    to_wire,
    tool_error_from_result,
    with_blob_sideband,
    without_blob_sideband,
)


def test_cancelled_result_wire_shape() -> None:
    wire = to_wire(cancelled_result())
    assert wire == {
        "content": [{"type": "text", "text": "Tool call cancelled"}],
        "isError": True,
        "meta": {"a2c_cancelled": True, "a2c_cancel_reason": "agent_requested"},
    }
    decoded = from_wire(CallToolResult, wire)
    assert is_cancelled(decoded) and not is_timed_out(decoded)
    assert cancel_reason_of(decoded) == "agent_requested"
    # Cancellation has no error code: a plain ToolError, not a timeout.
    error = tool_error_from_result(decoded)
    assert error is not None and error.code is None


def test_timeout_result_has_marker_and_code() -> None:
    result = timeout_result("slow", extra={"mcp_server": "s", A2C_TIMEOUT: False})
    assert result.meta == {"mcp_server": "s", "error_code": 4004, "a2c_timeout": True}
    assert is_timed_out(result) and not is_cancelled(result)


@pytest.mark.parametrize("key", ["meta", "_meta"])
def test_markers_are_read_from_either_spelling(key: str) -> None:
    wire = {"content": [], "isError": True, key: {A2C_CANCELLED: True, A2C_TIMEOUT: True}}
    assert is_cancelled(wire) and is_timed_out(wire)
    decoded = from_wire(CallToolResult, wire)
    assert is_cancelled(decoded) and is_timed_out(decoded)


def test_meta_wins_over_underscore_meta_but_both_are_kept() -> None:
    wire = {"content": [], "isError": True,
            "meta": {A2C_CANCELLED: False, "error_code": 4003},
            "_meta": {A2C_CANCELLED: True, A2C_TIMEOUT: True}}  # fmt: skip
    assert result_marker(wire, A2C_CANCELLED) is False
    assert result_marker(wire, A2C_TIMEOUT) is True
    decoded = from_wire(CallToolResult, wire)
    assert decoded.meta == {A2C_CANCELLED: False, "error_code": 4003, A2C_TIMEOUT: True}


def test_old_spellings_are_still_read() -> None:
    assert is_timed_out({"content": [], "meta": {"timeout": True}})
    assert is_cancelled({"content": [], "meta": {"cancelled": True}})
    assert not is_cancelled({"content": [], "meta": {"a2c_cancelled": "yes"}})  # not a boolean
    assert not is_timed_out({"content": [], "meta": None})


IMAGE = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
EMBEDDED = {"type": "resource",
            "resource": {"uri": "file:///a.bin", "mimeType": "application/zip", "blob": "UEsDBA=="}}  # fmt: skip
SIDEBAND = BlobSideband(blob_handle="h1", total_size=8, sha256="cd" * 32)


def test_sideband_for_image_item_golden() -> None:
    out = with_blob_sideband(IMAGE, SIDEBAND)
    assert out == {"type": "image", "mimeType": "image/png", "data": "",
                   "_meta": {"a2c_blob_handle": "h1", "a2c_total_size": 8,
                             "a2c_sha256": "cd" * 32}}  # fmt: skip
    assert blob_sideband_of(out) == SIDEBAND
    assert blob_sideband_of(IMAGE) is None
    assert without_blob_sideband(out, IMAGE["data"]) == IMAGE


def test_sideband_for_embedded_blob_goes_into_the_item_meta() -> None:
    out = with_blob_sideband({**EMBEDDED, "_meta": {"keep": 1}}, SIDEBAND)
    assert out["resource"]["blob"] == "" and "_meta" not in out["resource"]
    assert out["_meta"][A2C_BLOB_HANDLE] == "h1" and out["_meta"]["keep"] == 1
    restored = without_blob_sideband(out, "UEsDBA==")
    assert restored == {**EMBEDDED, "_meta": {"keep": 1}}


def test_text_items_have_no_carrier() -> None:
    with pytest.raises(ValueError, match="no binary data"):
        with_blob_sideband({"type": "text", "text": "x"}, SIDEBAND)


def test_tolerant_sideband_reading() -> None:
    item = {"type": "audio", "data": "", "_meta": {A2C_BLOB_HANDLE: "h", A2C_TOTAL_SIZE: "9"}}
    assert blob_sideband_of(item) == BlobSideband(blob_handle="h", total_size=-1, sha256="")
    assert blob_sideband_of({"type": "audio", "_meta": {A2C_BLOB_HANDLE: 5}}) is None
    assert blob_sideband_of({"type": "audio", "_meta": "junk"}) is None
    assert blob_sideband_of({"type": "image", "_meta": {A2C_SHA256: "x"}}) is None


items = st.sampled_from([IMAGE, EMBEDDED, {**IMAGE, "type": "audio"}]).flatmap(
    lambda base: st.fixed_dictionaries(
        {},
        optional={
            "_meta": st.dictionaries(
                st.sampled_from(["a", "b", "fullscreen"]), st.integers(), min_size=1, max_size=2
            )
        },
    ).map(lambda extra: {**base, **extra})
)
sidebands = st.builds(
    BlobSideband,
    blob_handle=st.text(min_size=1, max_size=12),
    total_size=st.integers(0, 2**40),
    sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
)


@given(items, sidebands)
def test_sideband_round_trip_never_mutates_input(item: dict[str, Any], sb: BlobSideband) -> None:
    before = copy.deepcopy(item)
    out = with_blob_sideband(item, sb)
    assert item == before
    assert blob_sideband_of(out) == sb
    carrier = out["data"] if "data" in out else out["resource"]["blob"]
    assert carrier == ""
    original = item["data"] if "data" in item else item["resource"]["blob"]
    assert without_blob_sideband(out, original) == item
