"""Skill names, SKILL.md frontmatter, the file sandbox and hostile archives (pure rules)."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_computer._skills import (
    ArchiveError,
    ArchiveLimits,
    SkillFileProblem,
    StagingError,
    is_kebab,
    lex_skill_name,
    mcp_skill_name,
    normalize_server_segment,
    parse_skill_md,
    resolve_skill_file,
    server_segment_problem,
    skill_roots,
    split_frontmatter,
    unpack_archive,
)
from a2c_computer._skills._stage import stage_mcp_skill
from a2c_protocol import SkillResourceReason

kebab = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}", fullmatch=True).filter(
    lambda s: len(s) <= 64
)

# ----------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("server", "segment"),
    [
        ("doc-tools", "doc-tools"),
        ("doc tools.v2", "doc_tools_v2"),
        ("文档", "__"),
        ("A_b-9", "A_b-9"),
    ],
)
def test_server_segment_normalization_follows_the_spec_examples(server: str, segment: str) -> None:
    assert normalize_server_segment(server) == segment


@given(st.text(max_size=80))
def test_normalized_server_segments_pass_the_lexer_when_not_too_long(server: str) -> None:
    segment = normalize_server_segment(server)
    assert len(segment) == len(server)
    name = mcp_skill_name(server, "x")
    if server_segment_problem(segment) is None:
        assert lex_skill_name(name) is None
    else:
        assert lex_skill_name(name) is not None


@given(kebab, kebab)
def test_every_synthesized_form_passes_the_lexer(plugin: str, skill: str) -> None:
    assert lex_skill_name(skill) is None
    assert lex_skill_name(f"{plugin}:{skill}") is None
    assert lex_skill_name(f"mcp:Srv_1:{skill}") is None


@pytest.mark.parametrize("name", ["x", "a-1", "mcp:Doc_Tools-2:x", "mcp:skill", "claude-ai:x"])
def test_the_spec_examples_pass_the_lexer(name: str) -> None:
    # mcp:skill has two segments: the marketplace form, so an unknown one is a 4014 (not
    # found), never a 4016 (malformed).
    assert lex_skill_name(name) is None


@pytest.mark.parametrize(
    "name",
    [
        "", "Upper", "-lead", "trail-", "dou--ble", "a" * 65, "sp ace", "a:b:c", "mcp:srv:Bad",
        "mcp::x", "mcp:" + "s" * 65 + ":x", "a:b:c:d", "mcp:srv:x:y", ":x", "x:", "../etc",
        "user:", "mcp:sr.v:x",
    ],
)  # fmt: skip
def test_lexer_rejects_bad_names(name: str) -> None:
    assert lex_skill_name(name) is not None


def test_lexer_rejects_non_strings() -> None:
    assert lex_skill_name(None) is not None
    assert lex_skill_name(3) is not None


@given(st.text(max_size=70))
def test_is_kebab_matches_its_definition(text: str) -> None:
    expected = (
        1 <= len(text) <= 64
        and all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in text)
        and not text.startswith("-")
        and not text.endswith("-")
        and "--" not in text
    )
    assert is_kebab(text) is expected


# ------------------------------------------------------------- frontmatter


def test_frontmatter_is_removed_and_body_bytes_are_kept() -> None:
    data = b"---\r\nname: log-triage\r\ndescription: Triage logs.\r\n---\r\n# Body\r\nline\r\n"
    meta, body = parse_skill_md(data)
    assert meta.name == "log-triage" and meta.description == "Triage logs."
    assert body == b"# Body\r\nline\r\n"


def test_frontmatter_optional_fields() -> None:
    data = (
        b"---\nname: pdf-fill\ndescription: Fill PDFs.\nlicense: MIT\ncompatibility: linux\n"
        b"allowed-tools: pdf_read, pdf_write\nmetadata:\n  owner: docs\n---\n"
    )
    meta, body = parse_skill_md(data)
    assert meta.license == "MIT" and meta.compatibility == "linux"
    assert meta.allowed_tools == ("pdf_read", "pdf_write")
    assert meta.metadata == {"owner": "docs"}
    assert body == b""


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"# no frontmatter\n", "no YAML frontmatter"),
        (b"---\nname: x\ndescription: y\n", "no YAML frontmatter"),  # never closed
        (b"---\n: : :\n  - [\n---\n", "not valid YAML"),
        (b"---\n- a\n- b\n---\n", "must be a YAML mapping"),
        (b"---\nname: Bad_Name\ndescription: d\n---\n", "'name'"),
        (b"---\nname: ok\n---\n", "'description'"),
        (b"---\nname: ok\ndescription: '   '\n---\n", "'description'"),
        (b"---\nname: ok\ndescription: \xff\n---\n", "not UTF-8"),
        (b"---\nname: !!python/object:os.system x\ndescription: d\n---\n", "not valid YAML"),
    ],
)
def test_malformed_frontmatter_says_what_is_wrong(data: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_skill_md(data)


@given(st.binary(max_size=200))
def test_split_frontmatter_never_loses_bytes(data: bytes) -> None:
    front, body = split_frontmatter(data)
    if front is None:
        assert body == data
    else:
        assert data.endswith(body) and front in data


# ----------------------------------------------------------------- sandbox


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "skill"
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody")
    (root / "references" / "guide.md").write_text("guide")
    (root / ".skillenv").write_text("TOKEN=secret")
    (tmp_path / "outside.txt").write_text("outside")
    return root


@pytest.mark.parametrize(
    ("rel_path", "reason"),
    [
        ("/etc/passwd", SkillResourceReason.TRAVERSAL),
        ("../outside.txt", SkillResourceReason.TRAVERSAL),
        ("references/../../outside.txt", SkillResourceReason.TRAVERSAL),
        ("references\\guide.md", SkillResourceReason.TRAVERSAL),
        ("a\x00b", SkillResourceReason.TRAVERSAL),
        ("", SkillResourceReason.TRAVERSAL),
        (".skillenv", SkillResourceReason.FORBIDDEN),
        (".SkillEnv", SkillResourceReason.FORBIDDEN),
        ("references/.skillenv", SkillResourceReason.FORBIDDEN),  # forbidden even if absent
        ("missing.md", SkillResourceReason.NOT_FOUND),
        ("references", SkillResourceReason.NOT_FOUND),  # a directory
    ],
)
def test_sandbox_refuses_with_the_right_reason(
    package: Path, rel_path: str, reason: SkillResourceReason
) -> None:
    result = resolve_skill_file(package, rel_path)
    assert isinstance(result, SkillFileProblem) and result.reason is reason


def test_sandbox_serves_files_inside_the_package(package: Path) -> None:
    assert resolve_skill_file(package, "SKILL.md") == (package / "SKILL.md").resolve()
    assert (
        resolve_skill_file(package, "./references/guide.md")
        == (package / "references" / "guide.md").resolve()
    )


def test_sandbox_follows_symlinks_only_inside(package: Path) -> None:
    (package / "escape.txt").symlink_to(package.parent / "outside.txt")
    (package / "env-link").symlink_to(package / ".skillenv")
    (package / "alias.md").symlink_to(package / "references" / "guide.md")
    (package / "dir-escape").symlink_to(package.parent)
    for rel_path, reason in [
        ("escape.txt", SkillResourceReason.TRAVERSAL),
        ("env-link", SkillResourceReason.FORBIDDEN),
        ("dir-escape/outside.txt", SkillResourceReason.TRAVERSAL),
    ]:
        result = resolve_skill_file(package, rel_path)
        assert isinstance(result, SkillFileProblem) and result.reason is reason, rel_path
    assert (
        resolve_skill_file(package, "alias.md") == (package / "references" / "guide.md").resolve()
    )


# ----------------------------------------------------------------- archives


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_tar_and_zip_unpack(tmp_path: Path) -> None:
    tar = _tar([_file("pdf-fill/SKILL.md", b"skill"), _file("pdf-fill/assets/a.bin", b"\x00\x01")])
    unpack_archive(tar, "tar.gz", tmp_path / "t", ArchiveLimits())
    assert (tmp_path / "t" / "pdf-fill" / "assets" / "a.bin").read_bytes() == b"\x00\x01"
    unpack_archive(
        _zip({"SKILL.md": b"z", "scripts/run.sh": b"echo"}), "zip", tmp_path / "z", ArchiveLimits()
    )
    assert (tmp_path / "z" / "scripts" / "run.sh").read_bytes() == b"echo"


def _symlink(name: str, target: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    return info, None


def _hardlink(name: str, target: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE
    info.linkname = target
    return info, None


def _fifo(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.FIFOTYPE
    return info, None


@pytest.mark.parametrize(
    ("members", "why"),
    [
        ([_file("../evil", b"x")], "'..'"),
        ([_file("ok/../../evil", b"x")], "'..'"),
        ([_file("/abs/evil", b"x")], "absolute"),
        ([_symlink("link", "/etc/passwd")], "link"),
        ([_hardlink("hard", "/etc/passwd")], "link"),
        ([_fifo("fifo")], "special file"),
    ],
)
def test_hostile_tar_members_refuse_the_archive_and_write_nothing(
    tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], why: str
) -> None:
    dest = tmp_path / "dest"
    with pytest.raises(ArchiveError, match=why):
        unpack_archive(_tar(members), "tar.gz", dest, ArchiveLimits())
    assert not dest.exists()
    assert sorted(os.listdir(tmp_path)) == []


def test_zip_traversal_absolute_and_symlink_are_refused(tmp_path: Path) -> None:
    for index, files in enumerate([{"../evil": b"x"}, {"/abs": b"x"}]):
        with pytest.raises(ArchiveError):
            unpack_archive(_zip(files), "zip", tmp_path / f"d{index}", ArchiveLimits())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("link")
        info.external_attr = 0o120777 << 16  # a symlink
        archive.writestr(info, "/etc/passwd")
    with pytest.raises(ArchiveError, match="link"):
        unpack_archive(buffer.getvalue(), "zip", tmp_path / "sym", ArchiveLimits())
    assert not (tmp_path / "sym").exists()


def test_zip_bomb_is_stopped_at_the_byte_limit(tmp_path: Path) -> None:
    bomb = _zip({"big.txt": b"\x00" * (20 * 1024 * 1024)})  # ~20 KB compressed
    assert len(bomb) < 100_000
    with pytest.raises(ArchiveError, match="bytes once unpacked"):
        unpack_archive(bomb, "zip", tmp_path / "bomb", ArchiveLimits(max_bytes=1024 * 1024))
    assert not (tmp_path / "bomb").exists()


def test_ten_thousand_members_are_refused(tmp_path: Path) -> None:
    tar = _tar([_file(f"f{i}", b"") for i in range(10_000)])
    with pytest.raises(ArchiveError, match="more than 1000 members"):
        unpack_archive(tar, "tar.gz", tmp_path / "many", ArchiveLimits(max_members=1000))


def test_garbage_and_unknown_formats_are_refused(tmp_path: Path) -> None:
    for fmt in ("tar.gz", "zip"):
        with pytest.raises(ArchiveError, match="not a readable"):
            unpack_archive(b"not an archive", fmt, tmp_path / fmt, ArchiveLimits())
    with pytest.raises(ArchiveError, match="archive_format"):
        unpack_archive(b"", "rar", tmp_path / "rar", ArchiveLimits())


async def test_a_later_package_with_a_taken_name_never_overwrites_the_first(
    tmp_path: Path,
) -> None:
    def mounted(folder: str, body: str) -> dict[str, object]:
        root = tmp_path / folder
        root.mkdir()
        (root / "SKILL.md").write_text(f"---\nname: guide\ndescription: d\n---\n{body}\n")
        return {
            "uri": f"skill://org.example/{folder}",
            "_meta": {"source": "mounted", "mount_dir": str(root)},
        }

    resources = [mounted("first", "# first"), mounted("second", "# second")]
    first, second = skill_roots(resources)
    taken: set[str] = set()

    async def no_read(uri: str) -> list[dict[str, object]]:
        return []

    install = tmp_path / "install"
    kept = await stage_mcp_skill(
        "srv", first, resources, no_read, install, limits=ArchiveLimits(), taken=taken
    )
    with pytest.raises(StagingError, match="came first"):
        await stage_mcp_skill(
            "srv", second, resources, no_read, install, limits=ArchiveLimits(), taken=taken
        )
    assert (kept.root / "SKILL.md").read_text().endswith("# first\n")
