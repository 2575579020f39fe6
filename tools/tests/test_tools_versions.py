"""Tests of tools/versions.py, run on a temporary copy of the repository layout.

Only the files the script reads are copied (the table, each distribution's pyproject.toml
and version file, the core's _versioning.py, the matrix files), so every test can edit its
copy freely and the real repository is never touched.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from a2c_testkit.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools" / "versions.py"
ROLES = ("a2c-server", "a2c-computer", "a2c-agent")
README = "# a2c-smcp-py\n\n<!-- compat-matrix:start -->\n<!-- compat-matrix:end -->\n"


versions = load_script(SCRIPT, "a2c_tools_versions")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the files versions.py reads, with a README that has the markers."""
    root = tmp_path / "repo"
    for relative in ["tools/versions.toml", "docs/compatibility.md"]:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / relative, root / relative)
    for dist in versions.load_table(REPO):
        files = [dist.pyproject(REPO), dist.version_file(REPO)]
        if dist.name == versions.CORE:
            files.append(dist.version_file(REPO).with_name("_versioning.py"))
        for source in files:
            target = root / source.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    (root / "README.md").write_text(README, encoding="utf-8")
    _reset_to_baseline(root)
    changed, errors = versions.write_matrix(root, versions.load_table(root))
    assert errors == []
    assert Path("README.md") in changed
    return root


def _reset_to_baseline(root: Path) -> None:
    """Put every version of the copy at 0.2.0 (protocol 0.2.0, pins >=0.2.0,<0.3).

    The tests spell out versions, so they start from a fixed state instead of whatever
    the repository has been released as by now.
    """
    table = root / "tools" / "versions.toml"
    text = table.read_text(encoding="utf-8")
    text = re.sub(r'(?m)^(version|protocol) = "[0-9.]+"', r'\1 = "0.2.0"', text)
    table.write_text(text, encoding="utf-8")
    for dist in versions.load_table(root):
        dist.version_file(root).write_text('__version__ = "0.2.0"\n', encoding="utf-8")
        pyproject = dist.pyproject(root)
        pins = re.sub(
            r'"a2c-protocol-core>=[0-9.]+,<[0-9.]+"',
            '"a2c-protocol-core>=0.2.0,<0.3"',
            pyproject.read_text(encoding="utf-8"),
        )
        pyproject.write_text(pins, encoding="utf-8")
        if dist.name == versions.CORE:
            protocol = dist.version_file(root).with_name("_versioning.py")
            protocol.write_text(
                re.sub(
                    r'PROTOCOL_VERSION: Final = "[0-9.]+"',
                    'PROTOCOL_VERSION: Final = "0.2.0"',
                    protocol.read_text(encoding="utf-8"),
                ),
                encoding="utf-8",
            )


def _read(root: Path, relative: str) -> str:
    return (root / relative).read_text(encoding="utf-8")


def _write(root: Path, relative: str, text: str) -> None:
    (root / relative).write_text(text, encoding="utf-8")


def _version_of(root: Path, name: str) -> str:
    row = next(dist for dist in versions.load_table(root) if dist.name == name)
    return str(row.version)


def test_tools_versions_show_lists_every_distribution(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert versions.main(["--root", str(repo), "show"]) == 0
    out = capsys.readouterr().out
    for name in (versions.CORE, *ROLES):
        assert re.search(rf"^{name}\s+0\.2\.0\s+0\.2\.0\s+0\.2\.0", out, re.MULTILINE), out
    assert ">=0.2.0,<0.3" in out
    assert "core PROTOCOL_VERSION: 0.2.0" in out


def test_tools_versions_check_passes_on_a_consistent_copy(repo: Path) -> None:
    assert versions.check(repo) == []


def test_tools_versions_check_passes_on_the_real_repository() -> None:
    problems = versions.check(REPO)
    readme_missing = [
        p for p in problems if p.startswith("README.md not found") or "README.md lacks" in p
    ]
    if problems and problems == readme_missing:
        pytest.skip(f"the root README.md has no compatibility-matrix markers yet: {problems}")
    assert problems == []


def test_tools_versions_bump_core_rewrites_version_table_pins_and_matrix(repo: Path) -> None:
    before = {role: _read(repo, f"packages/{role}/pyproject.toml") for role in ROLES}
    table_before = _read(repo, "tools/versions.toml")

    assert versions.main(["--root", str(repo), "bump", "a2c-protocol-core", "patch"]) == 0

    assert _read(repo, "packages/a2c-protocol-core/src/a2c_protocol/_version.py") == (
        '__version__ = "0.2.1"\n'
    )
    assert _version_of(repo, versions.CORE) == "0.2.1"
    # Only the core's version line changed in the table; comments and layout survive.
    table_diff = [
        (old, new)
        for old, new in zip(
            table_before.splitlines(), _read(repo, "tools/versions.toml").splitlines(), strict=True
        )
        if old != new
    ]
    assert table_diff == [('version = "0.2.0"', 'version = "0.2.1"')]
    assert _version_of(repo, "a2c-server") == "0.2.0"
    for role in ROLES:
        after = _read(repo, f"packages/{role}/pyproject.toml")
        assert after == before[role].replace(
            '"a2c-protocol-core>=0.2.0,<0.3"', '"a2c-protocol-core>=0.2.1,<0.3"'
        )
        assert after != before[role]
    for relative in ("README.md", "docs/compatibility.md"):
        assert "| `a2c-protocol-core` | 0.2.1 |" in _read(repo, relative)
        assert "`>=0.2.1,<0.3`" in _read(repo, relative)
    assert versions.check(repo) == []


def test_tools_versions_bump_role_leaves_the_other_packages_alone(repo: Path) -> None:
    untouched = {
        name: _read(repo, f"packages/{name}/pyproject.toml")
        for name in ("a2c-protocol-core", "a2c-server", "a2c-computer", "a2c-agent")
    }
    assert versions.bump(repo, "a2c-agent", "patch")[0] == "a2c-agent: 0.2.0 -> 0.2.1"
    assert _read(repo, "packages/a2c-agent/src/a2c_agent/_version.py") == (
        '__version__ = "0.2.1"\n'
    )
    assert _version_of(repo, "a2c-agent") == "0.2.1"
    assert _version_of(repo, versions.CORE) == "0.2.0"
    for name, text in untouched.items():
        assert _read(repo, f"packages/{name}/pyproject.toml") == text
    assert versions.check(repo) == []


def test_tools_versions_minor_bump_without_a_protocol_change_fails_check(repo: Path) -> None:
    report = versions.bump(repo, "a2c-protocol-core", "minor")
    assert any("MAJOR.MINOR follow the protocol" in line for line in report)
    for role in ROLES:
        assert '"a2c-protocol-core>=0.3.0,<0.4"' in _read(repo, f"packages/{role}/pyproject.toml")
    problems = versions.check(repo)
    assert any("does not follow its protocol" in p for p in problems), problems


@pytest.mark.parametrize(
    ("pin", "expected"),
    [
        (">=0.1.0,<0.2", "does not admit the current a2c-protocol-core 0.2.0"),
        (">=0.2.1,<0.3", "does not admit the current a2c-protocol-core 0.2.0"),
        (">=0.2.0", "admits a2c-protocol-core 0.3.0"),
        ("", "has no version range"),
    ],
)
def test_tools_versions_check_catches_a_mismatched_core_pin(
    repo: Path, pin: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = "packages/a2c-computer/pyproject.toml"
    text = _read(repo, path)
    _write(repo, path, text.replace('"a2c-protocol-core>=0.2.0,<0.3"', f'"a2c-protocol-core{pin}"'))

    assert versions.main(["--root", str(repo), "check"]) == 1
    err = capsys.readouterr().err
    assert "versions check FAILED" in err
    assert "packages/a2c-computer/pyproject.toml" in err
    assert expected in err


def test_tools_versions_check_catches_a_missing_core_dependency(repo: Path) -> None:
    path = "packages/a2c-agent/pyproject.toml"
    _write(repo, path, _read(repo, path).replace('    "a2c-protocol-core>=0.2.0,<0.3",\n', ""))
    assert versions.check(repo) == [
        "packages/a2c-agent/pyproject.toml: no dependency on a2c-protocol-core"
    ]


def test_tools_versions_check_catches_a_role_depending_on_a_role(repo: Path) -> None:
    path = "packages/a2c-agent/pyproject.toml"
    _write(repo, path, _read(repo, path).replace('"httpx>=0.27",', '"httpx>=0.27", "a2c-server",'))
    problems = versions.check(repo)
    assert any("a role never depends on a role" in p for p in problems), problems


def test_tools_versions_check_catches_a_version_file_drift(repo: Path) -> None:
    _write(repo, "packages/a2c-server/src/a2c_server/_version.py", '__version__ = "0.2.7"\n')
    problems = versions.check(repo)
    assert len(problems) == 1
    assert "a2c-server" in problems[0]
    assert "0.2.7" in problems[0]


def test_tools_versions_check_catches_a_protocol_drift(repo: Path) -> None:
    path = "packages/a2c-protocol-core/src/a2c_protocol/_versioning.py"
    text = _read(repo, path)
    assert 'PROTOCOL_VERSION: Final = "0.2.0"' in text
    _write(
        repo, path, text.replace('PROTOCOL_VERSION: Final = "0.2.0"', 'PROTOCOL_VERSION = "0.3.0"')
    )
    problems = versions.check(repo)
    assert any("PROTOCOL_VERSION is 0.3.0" in p for p in problems), problems
    assert any("a2c-agent: implements protocol 0.2.0" in p for p in problems), problems


def test_tools_versions_check_catches_an_inconsistent_protocol_column(repo: Path) -> None:
    path = "tools/versions.toml"
    text = _read(repo, path)
    head, tail = text.split("[distributions.a2c-server]")
    _write(
        repo,
        path,
        head
        + "[distributions.a2c-server]"
        + tail.replace('protocol = "0.2.0"', 'protocol = "0.3.0"', 1),
    )
    problems = versions.check(repo)
    assert any(p.startswith("a2c-server: implements protocol 0.3.0") for p in problems), problems


def test_tools_versions_check_catches_a_stale_matrix_and_write_fixes_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = "docs/compatibility.md"
    _write(
        repo, path, _read(repo, path).replace("| `a2c-agent` | 0.2.0 |", "| `a2c-agent` | 0.1.9 |")
    )
    assert versions.check(repo) == [
        "docs/compatibility.md: the compatibility matrix is stale; "
        "run `uv run python tools/versions.py matrix --write`"
    ]
    assert versions.main(["--root", str(repo), "matrix", "--write"]) == 0
    assert "rewrote the compatibility matrix in docs/compatibility.md" in capsys.readouterr().out
    assert versions.check(repo) == []
    # The hand-written text around the markers is kept.
    assert _read(repo, path).startswith("# Compatibility matrix\n")


def test_tools_versions_missing_readme_markers_are_reported_clearly(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(repo, "README.md", "# a2c-smcp-py\n")
    problems = versions.check(repo)
    assert len(problems) == 1
    assert problems[0].startswith("README.md lacks the marker(s) <!-- compat-matrix:start -->")
    assert versions.main(["--root", str(repo), "matrix", "--write"]) == 1
    assert "error: README.md lacks the marker(s)" in capsys.readouterr().err


def test_tools_versions_unknown_distribution_is_an_error(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert versions.main(["--root", str(repo), "bump", "a2c-demo", "patch"]) == 1
    assert "unknown distribution 'a2c-demo'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("specifier", "version", "admitted"),
    [
        (">=0.2.0,<0.3", "0.2.0", True),
        (">=0.2.0,<0.3", "0.2.99", True),
        (">=0.2.0,<0.3", "0.3.0", False),
        (">=0.2.1,<0.3", "0.2.0", False),
        ("~=0.2.0", "0.2.5", True),
        ("~=0.2.0", "0.3.0", False),
        ("==0.2.*", "0.2.4", True),
        ("!=0.2.1", "0.2.1", False),
        ("", "1.0.0", True),
        (">1,<=2.0", "2.0.0", True),
    ],
)
def test_tools_versions_specifier_admits(specifier: str, version: str, admitted: bool) -> None:
    assert versions.specifier_admits(specifier, version) is admitted


def test_tools_versions_core_range_form() -> None:
    assert versions.core_range("0.2.1") == ">=0.2.1,<0.3"
    assert versions.core_range("1.4.0") == ">=1.4.0,<2"


def test_tools_versions_command_line_exit_status(repo: Path) -> None:
    ok = subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(repo), "check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    _write(repo, "packages/a2c-agent/src/a2c_agent/_version.py", '__version__ = "0.2.9"\n')
    failed = subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(repo), "check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 1
    assert "a2c-agent" in failed.stderr


def test_tools_versions_release_tag_selects_one_distribution(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert versions.main(["--root", str(repo), "release-tag", "a2c-protocol-core-v0.2.0"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "distribution=a2c-protocol-core",
        "version=0.2.0",
        "path=packages/a2c-protocol-core",
    ]
    versions.bump(repo, "a2c-agent", "patch")
    assert versions.release_tag(repo, "a2c-agent-v0.2.1").name == "a2c-agent"


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("a2c-agent-v0.2.1", "says 0.2.1 but packages/a2c-agent/src/a2c_agent/_version.py"),
        ("a2c-demo-v0.2.0", "not a published distribution"),
        ("a2c-agent-0.2.0", "is not <distribution>-v<MAJOR.MINOR.PATCH>"),
        ("a2c-agent-v0.2", "is not <distribution>-v<MAJOR.MINOR.PATCH>"),
    ],
)
def test_tools_versions_release_tag_refuses_a_wrong_tag(
    repo: Path, tag: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert versions.main(["--root", str(repo), "release-tag", tag]) == 1
    assert expected in capsys.readouterr().err


def test_tools_versions_release_tag_refuses_a_version_file_ahead_of_the_table(repo: Path) -> None:
    _write(repo, "packages/a2c-server/src/a2c_server/_version.py", '__version__ = "0.2.1"\n')
    with pytest.raises(versions.VersionsError, match=re.escape("tools/versions.toml says 0.2.0")):
        versions.release_tag(repo, "a2c-server-v0.2.1")
