"""structuredContent copies of out-of-band bytes: emptied with a reference, then restored."""

from __future__ import annotations

from a2c_protocol import (
    A2C_STRUCTURED_REFS,
    BlobSideband,
    CallToolResult,
    detach_structured_duplicates,
    restore_structured_refs,
    with_blob_sideband,
)

BIG = "QUJD" * 1000
SIDEBAND = BlobSideband(blob_handle="h", total_size=3000, sha256="0" * 64)


def _pair() -> tuple[CallToolResult, CallToolResult]:
    image = {"type": "image", "mimeType": "image/png", "data": BIG}
    blob = {"type": "resource", "resource": {"uri": "f:///x", "blob": BIG + "QQ=="}}
    structured = {"content": [image, blob], "a/b": BIG, "other": "QUJD", "n": 1}
    before = CallToolResult(content=[image, blob], structured_content=structured)
    moved = [with_blob_sideband(image, SIDEBAND), with_blob_sideband(blob, SIDEBAND)]
    after = CallToolResult(content=moved, structured_content=structured, meta={"k": 1})
    return before, after


def test_copies_are_emptied_and_named_by_json_pointer() -> None:
    before, after = _pair()
    detached = detach_structured_duplicates(before, after)
    assert detached.structured_content == {
        "content": [
            {"type": "image", "mimeType": "image/png", "data": ""},
            {"type": "resource", "resource": {"uri": "f:///x", "blob": ""}},
        ],
        "a/b": "",
        "other": "QUJD",
        "n": 1,
    }
    assert detached.meta == {
        "k": 1,
        A2C_STRUCTURED_REFS: [
            {"path": "/content/0/data", "content_index": 0},
            {"path": "/content/1/resource/blob", "content_index": 1},
            {"path": "/a~1b", "content_index": 0},
        ],
    }
    assert before.structured_content is not None
    assert before.structured_content["a/b"] == BIG  # input untouched


def test_restore_puts_the_restored_bytes_back_and_drops_the_marker() -> None:
    before, after = _pair()
    detached = detach_structured_duplicates(before, after)
    restored = restore_structured_refs(
        CallToolResult(
            content=before.content,
            structured_content=detached.structured_content,
            meta=detached.meta,
        )
    )
    assert restored.structured_content == before.structured_content
    assert restored.meta == {"k": 1}


def test_a_reference_to_an_item_not_restored_stays() -> None:
    before, after = _pair()
    detached = detach_structured_duplicates(before, after)
    assert restore_structured_refs(detached) == detached  # carriers still empty
    bogus = CallToolResult(
        content=before.content,
        structured_content={"x": ""},
        meta={A2C_STRUCTURED_REFS: [{"path": "/nope", "content_index": 0}, "junk"]},
    )
    assert restore_structured_refs(bogus) == bogus


def test_nothing_moved_means_nothing_changes() -> None:
    before, _ = _pair()
    assert detach_structured_duplicates(before, before) is before
