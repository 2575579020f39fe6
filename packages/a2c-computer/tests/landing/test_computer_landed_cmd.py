"""``a2c-computer landed list | clean`` and the landing flags of ``run``."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from a2c_computer._cli import main
from a2c_computer._cli._args import apply_env, build_parser
from a2c_computer._landing import landing_settings
from a2c_computer._landing._fs import ATTR_AGENT

DAYS_AGO = time.time() - 3 * 86400


def landed_dir(tmp_path: Path) -> Path:
    """Two files of 'bot' (one 3 days old), one of nobody, a subdirectory and a link."""
    landing = tmp_path / "landing"
    landing.mkdir()
    for name, agent in (("old.bin", "bot"), ("new.bin", "bot"), ("anon.txt", None)):
        (landing / name).write_bytes(b"x" * 10)
        if agent is not None:
            os.setxattr(landing / name, ATTR_AGENT, agent.encode())
    os.utime(landing / "old.bin", (DAYS_AGO, DAYS_AGO))
    (landing / "sub").mkdir()
    (landing / "link").symlink_to(landing / "new.bin")
    return landing


def test_list_shows_age_size_agent_oldest_first(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    landing = landed_dir(tmp_path)
    assert main(["landed", "list", "--landing-dir", str(landing)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["AGE", "SIZE", "ON", "DISK", "AGENT", "NAME"]
    assert lines[1].split()[0] == "3d" and lines[1].split()[-2:] == ["bot", "old.bin"]
    assert {line.split()[-1] for line in lines[2:4]} == {"new.bin", "anon.txt"}
    assert lines[-1].startswith("3 files, ")  # regular files only
    assert main(["landed", "list", "--landing-dir", str(landing), "--json", "--agent", "bot"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["old.bin", "new.bin"]
    assert rows[0]["size"] == 10 and rows[0]["allocated"] >= 10 and rows[0]["agent"] == "bot"


def test_clean_by_age_and_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    landing = landed_dir(tmp_path)
    monkeypatch.setenv("A2C_LANDING_DIR", str(landing))  # the run flag's variable works too
    assert main(["landed", "clean", "--older-than", "1d", "--dry-run"]) == 0
    on_disk = (landing / "old.bin").stat().st_blocks * 512
    assert capsys.readouterr().out.splitlines() == [
        "old.bin",
        f"would remove 1 file ({on_disk} bytes on disk)",
    ]
    assert (landing / "old.bin").exists()
    assert main(["landed", "clean", "--older-than", "1d"]) == 0
    assert not (landing / "old.bin").exists()
    assert main(["landed", "clean", "--agent", "bot"]) == 0
    assert "removed 1 file" in capsys.readouterr().out
    assert main(["landed", "clean", "--all"]) == 0
    assert sorted(p.name for p in landing.iterdir()) == ["link", "sub"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["landed"], "landed needs a command: list or clean"),
        (["landed", "list"], "landed needs --landing-dir DIR"),
        (["landed", "clean", "--landing-dir", "{dir}"], "needs --older-than AGE, --agent NAME"),
        (["landed", "list", "--landing-dir", "{dir}/nope"], "does not exist"),
    ],
)
def test_landed_usage_errors(argv: list[str], message: str, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.delenv("A2C_LANDING_DIR", raising=False)
    assert main([a.replace("{dir}", str(tmp_path)) for a in argv]) == 2
    assert message in capsys.readouterr().err


def test_bad_ages_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["landed", "clean", "--landing-dir", ".", "--older-than", "5x"])
    assert exited.value.code == 2 and "'5x': not an age" in capsys.readouterr().err


def test_run_takes_every_landing_setting_from_flags_or_environment() -> None:
    parser = build_parser()
    args = parser.parse_args(["run", "--landing-dir", "/srv/l", "--landing-retention", "7d",
                              "--landing-agent-max-files", "5"])  # fmt: skip
    env = {"A2C_LANDING_MAX_FILES": "300", "A2C_LANDING_AGENT_MAX_BYTES": "4096",
           "A2C_LANDING_RETENTION": "1h"}  # fmt: skip
    apply_env(parser, args, env)
    settings = landing_settings(args)
    assert settings.retention == 7 * 86400  # the flag wins
    assert (settings.max_files, settings.agent_max_files, settings.agent_max_bytes) == (300, 5,
                                                                                        4096)  # fmt: skip
    assert str(settings.landing_dir) == "/srv/l"


def test_check_describes_the_landing_setup(tmp_path: Path) -> None:
    from a2c_computer._landing import LandingSettings, describe_landing

    line, bad = describe_landing(LandingSettings(landing_dir=tmp_path, max_files=50,
                                                 agent_max_files=5, retention=3600))  # fmt: skip
    assert not bad and f"land in {tmp_path.resolve()}" in line
    assert "50 files in all" in line and "per Agent any bytes, 5 files" in line
    assert "kept 3600s" in line
    line, bad = describe_landing(LandingSettings(landing_dir=tmp_path / "typo"))
    assert bad and "does not exist" in line and "run refuses to start" in line
