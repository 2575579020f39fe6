"""``a2c-computer skills`` and the skills part of ``check``, as real subprocesses with the
test skills MCP server."""

from __future__ import annotations

from pathlib import Path

from a2c_computer import SkillSettings
from a2c_computer._cli._args import apply_env, build_parser, skill_settings
from a2c_testkit.mcp_servers import stdio_server_config

from .test_computer_cli import cli, write_config


def package(folder: Path, name: str, front: str) -> Path:
    root = folder / name
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(f"---\n{front}\n---\n# {name}\n")
    return root


async def test_skills_lists_what_would_be_offered_and_every_refusal(tmp_path: Path) -> None:
    package(tmp_path / "user", "log-triage", "name: log-triage\ndescription: Triage logs.")
    package(tmp_path / "user", "broken", "name: [unclosed\ndescription: x")
    (tmp_path / "user" / "empty-dir").mkdir()  # no SKILL.md
    bad_mount = package(tmp_path / "mounts", "Bad_Name", "name: Bad_Name\ndescription: x")
    config = write_config(
        tmp_path, {"docs": stdio_server_config("docs", "skills", "--mounted", str(bad_mount))}
    )
    code, out, err = await cli(
        "skills", "--config", str(config), "--skills-dir", str(tmp_path / "user")
    )
    assert code == 1, out + err
    offered = out.split("refused")[0]
    assert "mcp:docs:inline-guide" in offered and "1.0.0" in offered
    assert "A skill served file by file as MCP resources." in offered
    line = next(x for x in offered.splitlines() if "log-triage" in x)
    assert line.split()[:3] == ["log-triage", "user", "-"]  # no version for user skills
    refused = out.split("refused by the Computer (user folder):")[1]
    assert "broken" in refused and "empty-dir" in refused
    assert "refused by the Computer (MCP server docs):" in out and "Bad_Name" in out

    code, out, _ = await cli("skills", "--config", str(config), "--no-user-skills")
    assert "log-triage" not in out and "mcp:docs:inline-guide" in out


async def test_check_lints_the_skills_mcp_servers_publish(tmp_path: Path) -> None:
    good = write_config(tmp_path, {"docs": stdio_server_config("docs", "skills")})
    code, out, _ = await cli("check", "--config", str(good))
    assert code == 0, out
    assert "skills offered (1):" in out and "mcp:docs:inline-guide" in out

    bad_mount = package(tmp_path / "mounts", "Bad_Name", "name: Bad_Name\ndescription: x")
    (tmp_path / "bad").mkdir()
    bad = write_config(
        tmp_path / "bad",
        {"docs": stdio_server_config("docs", "skills", "--mounted", str(bad_mount))},
    )
    code, out, _ = await cli("check", "--config", str(bad))
    assert code == 1 and "refused by the Computer (MCP server docs):" in out


def test_skill_flags_fall_back_to_their_environment_variables(tmp_path: Path) -> None:
    parser = build_parser()

    def settings(argv: list[str], env: dict[str, str]) -> SkillSettings:
        args = parser.parse_args(["run", *argv])
        apply_env(parser, args, env)
        return skill_settings(args, "box/1")

    default = settings([], {})
    assert default.install_dir.name.startswith("box_1-") and default.user_dir is not None
    assert default.per_process  # its own directory per process, see _workdirs
    env = {"A2C_SKILLS_DIR": str(tmp_path / "u"), "A2C_SKILLS_INSTALL_DIR": str(tmp_path / "i")}
    from_env = settings([], env)
    assert from_env.user_dir == tmp_path / "u" and from_env.install_dir == tmp_path / "i"
    assert not from_env.per_process
    assert settings(["--skills-dir", str(tmp_path / "f")], env).user_dir == tmp_path / "f"
    assert settings([], {**env, "A2C_NO_USER_SKILLS": "1"}).user_dir is None
    assert settings(["--no-user-skills"], {}).user_dir is None
