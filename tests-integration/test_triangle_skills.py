"""Skills through the real triangle: ``a2c-server``, ``a2c-computer run`` with the
skills test MCP server (all three staging modes; the archive served over loopback HTTP) and
a user folder, and the Agent library in-process.
"""

from __future__ import annotations

import hashlib
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import A2CSkillRef, SkillNotFoundError, SkillResourceError
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.mcp_servers.skills import ASSET_BYTES, INLINE_FILES
from a2c_testkit.skill_packages import serving, tar_gz, write_package
from a2c_testkit.triangle import deployment, eventually, write_config

LOGO = bytes(range(256)) * 1200  # 300 KiB, binary: travels by blob handle in chunks
# Frontmatter outside SKILL.md is content; placeholders are for the prompt layer to expand.
GUIDE = b"---\nname: not-a-skill\n---\nRun ${TFROBOT_SKILL_DIR}/scripts/triage.sh\n"
SERVER = "doc tools.v2"
SEGMENT = "doc_tools_v2"


def names(skills: Any) -> list[str]:
    return [s.name for s in skills or ()]


async def test_list_read_update_orphan_and_return(procs: Any, tmp_path: Path) -> None:
    user = tmp_path / "user"
    write_package(
        user, "log-triage", "Triage logs.",
        files={"references/notes.txt": b"notes\n", "assets/logo.png": LOGO,
               "references/guide.md": GUIDE},
    )  # fmt: skip
    mounted = write_package(tmp_path / "mounts", "pdf-fill", "Fill PDFs.")
    archive = tar_gz(write_package(tmp_path / "src", "release-notes", "Release notes."))
    with serving({"release-notes.tar.gz": archive}) as base:
        entry = stdio_server_config(
            SERVER, "skills", "--mounted", str(mounted),
            "--archive", f"{base}/release-notes.tar.gz", "--archive-name", "release-notes",
            "--archive-sha256", hashlib.sha256(archive).hexdigest(),
            default_tool_meta={"auto_apply": True},
        )  # fmt: skip
        config = write_config(tmp_path / "computer.json", [entry])
        args = ["--skills-dir", str(user), "--skills-install-dir", str(tmp_path / "install")]
        async with deployment(procs.log_dir, config, track=procs.track, computer_args=args) as t:
            agent = t.agent
            expected = [
                "log-triage",
                f"mcp:{SEGMENT}:inline-guide",
                f"mcp:{SEGMENT}:pdf-fill",
                f"mcp:{SEGMENT}:release-notes",
            ]
            skills = await eventually(lambda: _listed(agent, expected), what="every skill staged")
            by_name = {s.name: s for s in skills}
            assert by_name["log-triage"].source == "user" and by_name["log-triage"].version is None
            inline = by_name[f"mcp:{SEGMENT}:inline-guide"]
            assert inline.source == f"mcp:{SEGMENT}" and inline.version == "1.0.0"
            assert inline.uri == "skill://org.a2c.test.skills/inline-guide"

            md = await agent.get_skill("box", inline.name)
            assert md.text() == INLINE_FILES["SKILL.md"].decode().split("---\n", 2)[2]
            usage = await agent.get_skill("box", inline.name, "references/usage.md")
            assert usage.data == INLINE_FILES["references/usage.md"]
            asset = await agent.get_skill("box", inline.name, "assets/data.bin")
            assert (
                asset.data == ASSET_BYTES
                and asset.sha256 == hashlib.sha256(ASSET_BYTES).hexdigest()
            )
            logo = await agent.get_skill("box", "log-triage", "assets/logo.png")
            assert logo.data == LOGO and logo.mime_type == "image/png"
            guide = await agent.get_skill("box", "log-triage", "references/guide.md")
            assert guide.data == GUIDE  # served raw: frontmatter kept, placeholder unexpanded
            notes = await agent.get_skill("box", f"mcp:{SEGMENT}:release-notes", "SKILL.md")
            assert notes.text() == "# release-notes\n"

            # A file that vanishes between list and read: 4017 not_found, nothing else.
            (user / "log-triage" / "references" / "notes.txt").unlink()
            with pytest.raises(SkillResourceError) as gone:
                await agent.get_skill("box", "log-triage", "references/notes.txt")
            assert gone.value.reason == "not_found"

            # The MCP server stops publishing one skill: notify:update_skills reaches the
            # Agent, whose cache shrinks without being asked.
            await agent.call_tool("box", "remove_skill", {"name": "pdf-fill"}, timeout=60)
            await eventually(
                lambda: f"mcp:{SEGMENT}:pdf-fill" not in names(agent.skills.get("box")),
                what="the cache dropped pdf-fill",
            )
            assert len(agent.skills["box"]) == 3
            with pytest.raises(SkillNotFoundError) as missing:
                await agent.get_skill("box", f"mcp:{SEGMENT}:pdf-fill")
            assert missing.value.details == {"name": f"mcp:{SEGMENT}:pdf-fill"}

            # Killed: its skills disappear. Restarted by the Computer: they return.
            pid = int((await agent.call_tool("box", "pid", {}, timeout=60)).content[0]["text"])
            os.kill(pid, signal.SIGKILL)
            await eventually(
                lambda: names(agent.skills.get("box")) == ["log-triage"],
                what="the MCP server's skills hidden",
            )
            await eventually(
                lambda: len(agent.skills.get("box") or ()) == 4, what="its skills back"
            )
            assert (await agent.get_skill("box", inline.name)).text() == md.text()
    assert "Traceback" not in t.computer.logs()


async def _listed(
    agent: Any, expected: list[str], *, ordered: bool = True
) -> list[A2CSkillRef] | None:
    skills = await agent.get_skills("box")
    got = names(skills)
    same = got == expected if ordered else sorted(got) == sorted(expected)
    return skills if same else None


async def test_bad_packages_are_refused_and_the_computer_keeps_serving(
    procs: Any, tmp_path: Path
) -> None:
    user = tmp_path / "user"
    write_package(user, "good", "Fine.")
    write_package(user, "broken", front="name: [unclosed\ndescription: x")
    (user / "no-skill-md" / "references").mkdir(parents=True)
    write_package(user, "misnamed", front="name: other-name\ndescription: x")
    # Same frontmatter name as the skill the server publishes in resources mode: the later
    # one (this mounted copy) is refused.
    twin = write_package(
        tmp_path / "mounts", "guide-copy", front="name: inline-guide\ndescription: A copy."
    )
    huge = 200 * 1024 * 1024  # streamed, never written anywhere
    with serving({}, huge={"huge.tar.gz": huge}) as base:
        servers = [
            stdio_server_config(SERVER, "skills", default_tool_meta={"auto_apply": True}),
            # Normalizes to the same segment as SERVER: all its skills are refused.
            stdio_server_config(
                "doc_tools_v2", "skills", tool_prefix="twin_",
                default_tool_meta={"auto_apply": True},
            ),
            stdio_server_config(
                "hoard", "skills", "--archive", f"{base}/huge.tar.gz", "--archive-name", "huge",
                "--mounted", str(twin),
                tool_prefix="hoard_", default_tool_meta={"auto_apply": True},
            ),
        ]  # fmt: skip
        config = write_config(tmp_path / "computer.json", servers)
        args = ["--skills-dir", str(user), "--skills-install-dir", str(tmp_path / "install")]
        async with deployment(procs.log_dir, config, track=procs.track, computer_args=args) as t:
            # Which of the two servers whose names normalize alike registers first depends
            # on which is ready first; exactly one of them does.
            expected = ["good", f"mcp:{SEGMENT}:inline-guide", "mcp:hoard:inline-guide"]
            await eventually(
                lambda: _listed(t.agent, expected, ordered=False), what="the usable skills"
            )
            hoard = await t.agent.get_skill("box", "mcp:hoard:inline-guide")
            # The first one listed (resources mode) stays, files and all: the refused copy
            # never overwrote it on disk.
            assert hoard.text().startswith("# Inline guide")
            # Still serving tools and skills after every refusal.
            assert (await t.agent.get_skill("box", "good")).text() == "# good\n"
            result = await t.agent.call_tool("box", "pid", {}, timeout=60)
            assert not result.is_error
    logs = t.computer.logs()
    needles = ("broken", "no-skill-md", "other-name", "normalizes to", "download limit",
               "'inline-guide' came first")  # fmt: skip
    for needle in needles:
        assert needle in logs, needle
    assert "Traceback" not in logs
