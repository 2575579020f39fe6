"""The 0.2.1 skill and blob payloads and codes 4014 (skills), 4016, 4017, 4018."""

import json
from typing import Any

import pytest

import a2c_protocol as core
from a2c_protocol import (
    A2CSkillRef,
    BlobNotAccessibleError,
    BlobReason,
    GetBlobReq,
    GetBlobRet,
    GetSkillReq,
    GetSkillRet,
    GetSkillsRet,
    InvalidPayloadError,
    InvalidSkillNameError,
    McpServerNotFoundError,
    SkillNotFoundError,
    SkillResourceError,
    SkillResourceReason,
    error_from_payload,
    error_payload_from_wire,
    from_wire,
    remote_error_of,
    to_wire,
)

SHA = "ab" * 32


def test_golden_skill_ref_keeps_required_and_optional_fields() -> None:
    wire = {"name": "mcp:doc_tools:pdf-fill", "source": "mcp:doc_tools",
            "path": "/home/ops/.a2c/skills/mcp/doc_tools/pdf-fill",
            "description": "Fill PDF forms from a JSON record.",
            "uri": "skill://org.example.doctools/pdf-fill",
            "allowed_tools": ["pdf_read", "pdf_write"], "version": "1.4.0"}  # fmt: skip
    ref = from_wire(A2CSkillRef, wire)
    assert ref.allowed_tools == ["pdf_read", "pdf_write"] and ref.license is None
    assert to_wire(ref) == wire  # absent optional keys stay absent


def test_skill_ref_tolerates_unknown_keys_and_null_version() -> None:
    ref = from_wire(
        A2CSkillRef,
        {"name": "n", "source": "user", "path": "/p", "description": "d", "version": None,
         "some_future_key": {"x": 1}},
    )  # fmt: skip
    assert ref.version is None
    assert "version" not in to_wire(ref)


@pytest.mark.parametrize("missing", ["name", "source", "path", "description"])
def test_skill_ref_requires_the_four_fields(missing: str) -> None:
    wire = {"name": "n", "source": "user", "path": "/p", "description": "d"}
    del wire[missing]
    with pytest.raises(InvalidPayloadError) as info:
        from_wire(GetSkillsRet, {"skills": [wire], "req_id": "r"})
    assert info.value.errors[0].path == f"$.skills[0].{missing}"


def test_get_skill_req_defaults_to_skill_md() -> None:
    req = from_wire(GetSkillReq, {"agent": "a", "req_id": "r", "computer": "c", "name": "x"})
    assert req.rel_path is None and req.effective_rel_path == "SKILL.md"
    assert "rel_path" not in to_wire(req)
    assert GetSkillReq(agent="a", req_id="r", computer="c", name="x",
                       rel_path="scripts/a.sh").effective_rel_path == "scripts/a.sh"  # fmt: skip


def _skill_ret(**extra: Any) -> dict[str, Any]:
    return {"name": "log-triage", "rel_path": "SKILL.md", "mime_type": "text/markdown",
            "total_size": 3, "sha256": SHA, "req_id": "r", **extra}  # fmt: skip


def test_get_skill_ret_has_exactly_one_carrier() -> None:
    assert from_wire(GetSkillRet, _skill_ret(body="abc")).body == "abc"
    assert from_wire(GetSkillRet, _skill_ret(blob_handle="h")).blob_handle == "h"
    for bad in (_skill_ret(), _skill_ret(body="abc", blob_handle="h")):
        with pytest.raises(InvalidPayloadError, match="exactly one of body and blob_handle"):
            from_wire(GetSkillRet, bad)
    with pytest.raises(ValueError, match="exactly one"):
        GetSkillRet(name="n", rel_path="p", mime_type="m", total_size=0, sha256="", req_id="r")


def test_empty_text_body_is_a_body() -> None:
    ret = from_wire(GetSkillRet, _skill_ret(body="", total_size=0))
    assert to_wire(ret)["body"] == ""


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"agent": "a", "req_id": "r", "computer": "c"}, "$.blob_handle"),
        (
            {"agent": "a", "req_id": "r", "computer": "c", "blob_handle": "h", "chunk_offset": "0"},
            "$.chunk_offset",
        ),
        (
            {
                "agent": "a",
                "req_id": "r",
                "computer": "c",
                "blob_handle": "h",
                "max_chunk_bytes": 1.5,
            },
            "$.max_chunk_bytes",
        ),
    ],
)
def test_get_blob_req_names_the_bad_field(payload: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidPayloadError) as info:
        from_wire(GetBlobReq, payload)
    assert [e.path for e in info.value.errors] == [path]


def test_get_blob_ret_is_open_to_future_keys() -> None:
    wire = {"blob_handle": "h", "mime_type": "image/png", "total_size": 0, "sha256": SHA,
            "chunk_offset": 0, "eof": True, "blob": "", "req_id": "r"}  # fmt: skip
    ret = from_wire(GetBlobRet, {**wire, "etag": "x", "content_encoding": "identity"})
    assert to_wire(ret) == wire


# ------------------------------------------------------------------------ codes


def _decode(wire: dict[str, Any]) -> core.RemoteError:
    return error_from_payload(error_payload_from_wire(wire))


def test_skill_4014_carries_the_name_in_details() -> None:
    wire = {"code": 4014, "message": "Skill not found", "details": {"name": "kit:changelog"}}
    exc = _decode(wire)
    assert isinstance(exc, SkillNotFoundError) and isinstance(exc, McpServerNotFoundError)
    assert exc.name == "kit:changelog" and exc.mcp_server_name is None
    assert to_wire(exc.to_payload()) == wire
    assert to_wire(SkillNotFoundError(name="kit:changelog").to_payload()) == wire


def test_mcp_4014_stays_an_mcp_error() -> None:
    exc = _decode({"code": 4014, "message": "gone", "mcp_server_name": "wiki"})
    assert type(exc) is McpServerNotFoundError and exc.mcp_server_name == "wiki"


def test_4016_round_trip() -> None:
    wire = {"code": 4016, "message": "Invalid skill name", "details": {"name": "Bad Name!"}}
    exc = _decode(wire)
    assert isinstance(exc, InvalidSkillNameError) and exc.name == "Bad Name!"
    assert to_wire(InvalidSkillNameError(name="Bad Name!").to_payload()) == wire


def test_4017_reason_rel_path_and_size() -> None:
    wire = {"code": 4017, "message": "Skill resource not accessible",
            "details": {"reason": "too_large", "rel_path": "assets/model.bin",
                        "total_size": 734003200}}  # fmt: skip
    exc = _decode(wire)
    assert isinstance(exc, SkillResourceError)
    assert exc.reason == SkillResourceReason.TOO_LARGE
    assert (exc.rel_path, exc.total_size) == ("assets/model.bin", 734003200)
    made = SkillResourceError(
        reason=SkillResourceReason.TOO_LARGE, rel_path="assets/model.bin", total_size=734003200
    )
    assert json.loads(json.dumps(to_wire(made.to_payload()))) == wire


@pytest.mark.parametrize("reason", list(BlobReason))
def test_4018_every_known_reason(reason: BlobReason) -> None:
    wire = {"code": 4018, "message": "Blob not accessible", "details": {"reason": reason.value}}
    exc = _decode(wire)
    assert isinstance(exc, BlobNotAccessibleError) and exc.reason == reason
    assert to_wire(BlobNotAccessibleError(reason=reason).to_payload()) == wire


@pytest.mark.parametrize(
    ("wire", "cls"),
    [
        (
            {"code": 4017, "message": "m", "details": {"reason": "quota_exceeded"}},
            SkillResourceError,
        ),
        (
            {"code": 4018, "message": "m", "details": {"reason": "stale_epoch", "x": 1}},
            BlobNotAccessibleError,
        ),
        ({"code": 4018, "message": "m", "details": {"reason": 7}}, BlobNotAccessibleError),
        ({"code": 4017, "message": "m"}, SkillResourceError),
    ],
)
def test_unknown_or_missing_reasons_still_decode(wire: dict[str, Any], cls: type) -> None:
    exc = remote_error_of(wire)
    assert type(exc) is cls
    raw = (wire.get("details") or {}).get("reason")
    assert exc.reason == (raw if isinstance(raw, str) else None)  # type: ignore[attr-defined]
    assert to_wire(exc.to_payload()) == wire
