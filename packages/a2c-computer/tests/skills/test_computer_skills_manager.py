"""The skill manager over a real user folder and a real blob store (no Socket.IO)."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from pathlib import Path

import pytest

from a2c_computer._blobs import BlobSettings, BlobStore
from a2c_computer._exceptions import BlobUnavailableError
from a2c_computer._skills._manager import SkillManager
from a2c_computer._skills._settings import SkillSettings
from a2c_protocol import (
    InvalidSkillNameError,
    SkillNotFoundError,
    SkillResourceError,
    SkillResourceReason,
)

SKILL_MD = "---\nname: {name}\ndescription: {desc}\nallowed-tools: [grep]\n---\n# {name}\nRead references/guide.md.\n"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 400  # ~100 KB, binary


def write_skill(folder: Path, name: str, desc: str = "A skill.") -> Path:
    root = folder / name
    (root / "references").mkdir(parents=True)
    (root / "assets").mkdir()
    (root / "SKILL.md").write_text(SKILL_MD.format(name=name, desc=desc))
    (root / "references" / "guide.md").write_text("# Guide\n" + "step\n" * 10)
    (root / "assets" / "flow.png").write_bytes(PNG)
    (root / ".skillenv").write_text("API_KEY=hunter2")
    return root


@pytest.fixture
async def blobs(tmp_path: Path) -> BlobStore:
    store = BlobStore(BlobSettings(spool_dir=tmp_path / "spool"), owner="box")
    store.open()
    return store


def settings(tmp_path: Path, **kw: object) -> SkillSettings:
    values: dict[str, object] = {"poll_interval": 0.05, "debounce": 0.05, **kw}
    return SkillSettings(install_dir=tmp_path / "install", user_dir=tmp_path / "user", **values)  # type: ignore[arg-type]


async def test_user_folder_skills_are_listed_and_read(tmp_path: Path, blobs: BlobStore) -> None:
    write_skill(tmp_path / "user", "log-triage", "Triage logs.")
    write_skill(tmp_path / "user", "pdf-fill")
    (tmp_path / "user" / "Not_Kebab").mkdir()
    (tmp_path / "user" / "Not_Kebab" / "SKILL.md").write_text(
        "---\nname: Not_Kebab\ndescription: x\n---\n"
    )
    (tmp_path / "user" / "no-skill-md").mkdir()
    manager = SkillManager(settings(tmp_path), blobs=blobs)
    await manager.start()
    try:
        refs = manager.skills()
        assert [(r.name, r.source, r.description) for r in refs] == [
            ("log-triage", "user", "Triage logs."),
            ("pdf-fill", "user", "A skill."),
        ]
        assert refs[0].path == str(tmp_path / "user" / "log-triage")
        assert refs[0].allowed_tools == ["grep"] and refs[0].version is None

        ret = await manager.read("log-triage", None, "r1")
        body = "# log-triage\nRead references/guide.md.\n"
        assert (ret.rel_path, ret.mime_type, ret.body, ret.blob_handle) == (
            "SKILL.md",
            "text/markdown",
            body,
            None,
        )
        assert (
            ret.total_size == len(body.encode())
            and ret.sha256 == hashlib.sha256(body.encode()).hexdigest()
        )

        guide = await manager.read("log-triage", "references/guide.md", "r2")
        assert guide.body is not None and guide.body.startswith("# Guide")

        png = await manager.read("log-triage", "assets/flow.png", "r3")
        assert png.body is None and png.blob_handle and png.mime_type == "image/png"
        assert png.total_size == len(PNG) and png.sha256 == hashlib.sha256(PNG).hexdigest()
        pulled = b""
        while True:
            chunk = blobs.read_chunk(png.blob_handle, len(pulled), 32 * 1024)
            assert chunk.sha256 == png.sha256
            pulled += chunk.data
            if chunk.eof:
                break
        assert pulled == PNG
    finally:
        await manager.stop()


@pytest.mark.parametrize(
    ("name", "rel_path", "error", "reason"),
    [
        ("Bad Name", None, InvalidSkillNameError, None),
        ("a:b:c", None, InvalidSkillNameError, None),
        ("no-such-skill", None, SkillNotFoundError, None),
        ("mcp:srv:x", None, SkillNotFoundError, None),
        ("mcp:skill", None, SkillNotFoundError, None),  # the marketplace form: unknown, 4014
        ("log-triage", "../pdf-fill/SKILL.md", SkillResourceError, SkillResourceReason.TRAVERSAL),
        ("log-triage", "/etc/passwd", SkillResourceError, SkillResourceReason.TRAVERSAL),
        ("log-triage", ".skillenv", SkillResourceError, SkillResourceReason.FORBIDDEN),
        ("log-triage", "assets/.skillenv", SkillResourceError, SkillResourceReason.FORBIDDEN),
        ("log-triage", "missing.txt", SkillResourceError, SkillResourceReason.NOT_FOUND),
        ("log-triage", "assets", SkillResourceError, SkillResourceReason.NOT_FOUND),
    ],
)
async def test_bad_requests_get_their_code_and_reason(
    tmp_path: Path,
    blobs: BlobStore,
    name: str,
    rel_path: str | None,
    error: type[Exception],
    reason: str | None,
) -> None:
    write_skill(tmp_path / "user", "log-triage")
    write_skill(tmp_path / "user", "pdf-fill")
    manager = SkillManager(settings(tmp_path), blobs=blobs)
    await manager.start()
    try:
        with pytest.raises(error) as caught:
            await manager.read(name, rel_path, "r")
        if reason is not None:
            assert caught.value.reason == reason  # type: ignore[attr-defined]
        if error is SkillNotFoundError:
            assert caught.value.to_payload().details == {"name": name}  # type: ignore[attr-defined]
    finally:
        await manager.stop()


async def test_too_large_is_refused_with_the_size(tmp_path: Path, blobs: BlobStore) -> None:
    write_skill(tmp_path / "user", "log-triage")
    manager = SkillManager(settings(tmp_path, max_file_bytes=1000), blobs=blobs)
    await manager.start()
    with pytest.raises(SkillResourceError) as caught:
        await manager.read("log-triage", "assets/flow.png", "r")
    assert caught.value.reason == SkillResourceReason.TOO_LARGE and caught.value.total_size == len(
        PNG
    )
    await manager.stop()


async def test_text_over_the_budget_and_non_utf8_text_go_by_handle(
    tmp_path: Path, blobs: BlobStore
) -> None:
    root = write_skill(tmp_path / "user", "log-triage")
    (root / "references" / "big.md").write_text("x" * 5000)
    (root / "references" / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    manager = SkillManager(settings(tmp_path, inline_budget=4096), blobs=blobs)
    await manager.start()
    big = await manager.read("log-triage", "references/big.md", "r")
    latin = await manager.read("log-triage", "references/latin1.txt", "r")
    assert big.blob_handle and big.body is None and big.total_size == 5000
    assert latin.blob_handle and latin.mime_type == "text/plain"
    assert blobs.read_chunk(latin.blob_handle, 0, 100).data == "caf\xe9".encode("latin-1")
    await manager.stop()


async def test_the_inline_budget_edge_empty_text_and_a_tiny_binary(
    tmp_path: Path, blobs: BlobStore
) -> None:
    root = write_skill(tmp_path / "user", "log-triage")
    (root / "references" / "exact.md").write_text("x" * 4096)
    (root / "references" / "over.md").write_text("x" * 4097)
    (root / "references" / "empty.txt").write_bytes(b"")
    (root / "assets" / "dot.png").write_bytes(PNG[:10])
    manager = SkillManager(settings(tmp_path, inline_budget=4096), blobs=blobs)
    await manager.start()
    try:
        exact = await manager.read("log-triage", "references/exact.md", "r")
        over = await manager.read("log-triage", "references/over.md", "r")
        empty = await manager.read("log-triage", "references/empty.txt", "r")
        dot = await manager.read("log-triage", "assets/dot.png", "r")
    finally:
        await manager.stop()
    assert exact.body == "x" * 4096 and exact.blob_handle is None
    assert over.body is None and over.blob_handle and over.total_size == 4097
    assert (empty.body, empty.total_size, empty.blob_handle) == ("", 0, None)
    assert empty.sha256 == hashlib.sha256(b"").hexdigest()
    # Binary goes by handle whatever its size.
    assert dot.body is None and dot.blob_handle and dot.total_size == 10
    assert blobs.read_chunk(dot.blob_handle, 0, 100).data == PNG[:10]


async def test_a_handle_to_a_file_swapped_for_an_escaping_symlink_is_forbidden(
    tmp_path: Path, blobs: BlobStore
) -> None:
    # A pull re-runs the sandbox: the handle was minted for a plain file, which was then
    # replaced by a symlink leaving the package.
    root = write_skill(tmp_path / "user", "log-triage")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"not part of any skill")
    manager = SkillManager(settings(tmp_path, poll_interval=3600), blobs=blobs)
    await manager.start()
    try:
        flow = await manager.read("log-triage", "assets/flow.png", "r")
        assert flow.blob_handle
        (root / "assets" / "flow.png").unlink()
        (root / "assets" / "flow.png").symlink_to(outside)
        with pytest.raises(BlobUnavailableError) as refused:
            blobs.read_chunk(flow.blob_handle, 0, 64)
        assert refused.value.reason == "forbidden"
    finally:
        await manager.stop()


async def test_a_file_that_vanishes_after_listing_is_not_found_and_its_handle_gone(
    tmp_path: Path, blobs: BlobStore
) -> None:
    root = write_skill(tmp_path / "user", "log-triage")
    manager = SkillManager(settings(tmp_path, poll_interval=3600), blobs=blobs)
    await manager.start()
    png = await manager.read("log-triage", "assets/flow.png", "r")
    (root / "assets" / "flow.png").unlink()
    with pytest.raises(BlobUnavailableError) as gone:
        blobs.read_chunk(png.blob_handle, 0, 100)
    assert gone.value.reason == "gone"
    with pytest.raises(SkillResourceError) as caught:
        await manager.read("log-triage", "assets/flow.png", "r")
    assert caught.value.reason == SkillResourceReason.NOT_FOUND
    await manager.stop()


async def test_user_folder_changes_are_announced_once_each(
    tmp_path: Path, blobs: BlobStore
) -> None:
    announced: list[list[str]] = []
    manager: SkillManager

    async def on_change() -> None:
        announced.append([r.name for r in manager.skills()])

    write_skill(tmp_path / "user", "log-triage")
    manager = SkillManager(settings(tmp_path), blobs=blobs, on_change=on_change)
    await manager.start()
    try:
        assert announced == []  # the first scan is not a change
        write_skill(tmp_path / "user", "pdf-fill")
        await _until(lambda: announced == [["log-triage", "pdf-fill"]])
        shutil.rmtree(tmp_path / "user" / "log-triage")
        await _until(lambda: len(announced) == 2)
        assert announced[-1] == ["pdf-fill"]
        await asyncio.sleep(0.3)
        assert len(announced) == 2  # nothing changed since: nothing more announced
    finally:
        await manager.stop()


async def _until(check: object, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():  # type: ignore[operator]
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.02)
