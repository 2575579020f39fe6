"""Prove each published distribution installs on its own from its built wheel.

uv ignores version specifiers on workspace sources, so inside the workspace a wrong pin or a
missing dependency goes unnoticed. This script builds the four published distributions into
a temporary folder and, outside the workspace, for each one:

* ``a2c-protocol-core`` alone in a fresh venv: ``uv pip check`` passes, it imports, it
  declares exactly ``attrs`` and ``cattrs``, and nothing is installed beyond those two and
  what their own metadata requires (computed from the installed metadata, not hard-coded);
* each role (``a2c-server``, ``a2c-computer``, ``a2c-agent``) in its own fresh venv with only
  its wheel and the core wheel (other dependencies come from the package index by name):
  ``uv pip check`` passes, the package imports from the venv (not from the workspace) at the
  table's version, its command prints ``--help``, no other role is installed, and the
  forbidden packages are absent (no ``mcp`` / ``mcp-types`` for the Agent and the Server, no
  ``uvicorn`` or ``httpx2`` for the Agent, no ``httpx`` next to mcp 2's ``httpx2`` for the
  Computer), the Computer holds ``mcp`` 2.x; without its ``mcp`` extra, ``a2c-agent mcp``
  names the extra to install.

Usage: ``uv run python tools/wheel_check.py [--python PY] [--keep]``. Prints one line per
check and exits non-zero when any check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["inspect_wheel", "load_distributions", "main", "requirement_closure"]

ROOT: Final = Path(__file__).resolve().parent.parent
CORE: Final = "a2c-protocol-core"
#: The core's declared runtime dependencies: exactly these, nothing else.
CORE_DEPENDENCIES: Final = frozenset({"attrs", "cattrs"})
#: Role -> packages its environment must not contain.
FORBIDDEN: Final[dict[str, frozenset[str]]] = {
    "a2c-server": frozenset({"mcp", "mcp-types"}),
    # mcp 2 brings httpx2 and the Computer uses it for its own HTTP too: one client library.
    "a2c-computer": frozenset({"httpx"}),
    "a2c-agent": frozenset({"mcp", "mcp-types", "httpx2", "uvicorn", "prometheus-client"}),
}
#: Role -> the major version of ``mcp`` its environment must hold (the MCP SDK v2 line).
MCP_MAJOR: Final = {"a2c-computer": "2"}
#: Role -> its console command (called with --help).
COMMANDS: Final = {
    "a2c-server": "a2c-server",
    "a2c-computer": "a2c-computer",
    "a2c-agent": "a2c-agent",
}
COMMAND_TIMEOUT: Final = 120.0
INSTALL_TIMEOUT: Final = 900.0

# Runs inside a venv: every installed distribution -> the names it requires outside extras.
_METADATA_PROBE: Final = """
import importlib.metadata as md, json, re
graph = {}
for dist in md.distributions():
    name = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
    needs = []
    for req in dist.requires or []:
        marker = req.partition(";")[2]
        if "extra" in marker:
            continue
        match = re.match(r"\\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if match:
            needs.append(re.sub(r"[-_.]+", "-", match.group(1)).lower())
    graph[name] = needs
print(json.dumps(graph))
"""


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Dist:
    """A published distribution as the version table describes it."""

    name: str
    path: str
    module: str
    version: str


@dataclass
class Report:
    """Collects check results and prints them as they come."""

    failures: list[str] = field(default_factory=list)
    passed: int = 0

    def section(self, title: str) -> None:
        """Start a titled group of checks."""
        print(f"\n==> {title}", flush=True)

    def ok(self, message: str) -> None:
        """Record and print a passing check."""
        self.passed += 1
        print(f"  ok    {message}", flush=True)

    def fail(self, subject: str, message: str, detail: str = "") -> None:
        """Record and print a failing check, with the tail of any command output."""
        self.failures.append(message if message.startswith(subject) else f"{subject}: {message}")
        print(f"  FAIL  {message}", flush=True)
        for line in _tail(detail):
            print(f"        | {line}", flush=True)

    def check(self, subject: str, condition: bool, message: str, detail: str = "") -> bool:
        """Record ``message`` as passed or failed according to ``condition``."""
        if condition:
            self.ok(message)
        else:
            self.fail(subject, message, detail)
        return condition


def _tail(text: str, lines: int = 15) -> list[str]:
    kept = [line for line in text.strip().splitlines() if line.strip()]
    return kept[-lines:]


def requirement_closure(graph: dict[str, list[str]], roots: frozenset[str]) -> set[str]:
    """``roots`` and everything they require, transitively, in a name -> requirements graph.

    Environment markers are ignored, so the result is a superset of what one interpreter
    installs; that is what "attrs, cattrs and their own requirements" allows.
    """
    allowed: set[str] = set()
    pending = sorted(roots)
    while pending:
        name = pending.pop()
        if name not in allowed:
            allowed.add(name)
            pending += graph.get(name, [])
    return allowed


def inspect_wheel(wheel: Path, dist: Dist) -> list[str]:
    """Problems with a built wheel's contents: metadata version, typing marker, stray files."""
    problems: list[str] = []
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        if metadata_name is None:
            return ["no .dist-info/METADATA in the wheel"]
        metadata = archive.read(metadata_name).decode("utf-8")
    version = re.search(r"^Version: (.+)$", metadata, re.MULTILINE)
    if version is None or version.group(1).strip() != dist.version:
        found = version.group(1).strip() if version else "none"
        problems.append(f"METADATA Version is {found}, the table says {dist.version}")
    required_files = [f"{dist.module}/__init__.py", f"{dist.module}/py.typed"]
    if dist.module == "a2c_server":  # the console's assets are not Python files
        required_files += [f"a2c_server/_console/static/{n}" for n in ("console.js", "console.css")]
    for required in required_files:
        if required not in names:
            problems.append(f"{required} is missing from the wheel")
    top = {name.split("/", 1)[0] for name in names}
    stray = sorted(top - {dist.module, metadata_name.split("/", 1)[0]})
    if stray:
        problems.append(f"unexpected top-level entries in the wheel: {stray}")
    tests = sorted(n for n in names if "/tests/" in n or n.rsplit("/", 1)[-1].startswith("test_"))
    if tests:
        problems.append(f"test files shipped in the wheel: {tests[:5]}")
    return problems


def load_distributions(root: Path) -> list[Dist]:
    """The published distributions, from ``tools/versions.toml``."""
    data = tomllib.loads((root / "tools" / "versions.toml").read_text(encoding="utf-8"))
    return [
        Dist(name=name, path=row["path"], module=row["module"], version=row["version"])
        for name, row in data["distributions"].items()
    ]


def _env() -> dict[str, str]:
    """The environment for child commands, without the workspace venv leaking in."""
    env = dict(os.environ)
    for key in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT"):
        env.pop(key, None)
    return env


def run(
    cmd: Sequence[str | Path], cwd: Path, timeout: float = INSTALL_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` quietly and return it; a timeout or a missing program becomes rc 124/127."""
    args = [str(part) for part in cmd]
    try:
        return subprocess.run(
            args,
            cwd=cwd,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else ""
        return subprocess.CompletedProcess(args, 124, out, f"timed out after {timeout:.0f}s")
    except FileNotFoundError as exc:
        return subprocess.CompletedProcess(args, 127, "", str(exc))


def _output(result: subprocess.CompletedProcess[str]) -> str:
    return f"{result.stdout}\n{result.stderr}"


def _bin(venv: Path, name: str) -> Path:
    folder = venv / ("Scripts" if os.name == "nt" else "bin")
    suffix = ".exe" if os.name == "nt" else ""
    return folder / f"{name}{suffix}"


class Checker:
    """Builds the wheels once, then checks each distribution in its own venv."""

    def __init__(self, report: Report, work: Path, python: str) -> None:
        self.report = report
        self.work = work
        self.python = python
        self.out = work / "dist"
        self.wheels: dict[str, Path] = {}

    def build(self, dists: Sequence[Dist]) -> None:
        """``uv build`` each distribution (sdist, then the wheel from it) into one folder."""
        self.report.section("build the published distributions (uv build, sdist + wheel)")
        for dist in dists:
            result = run(
                ["uv", "build", "--package", dist.name, "--out-dir", self.out, "--quiet"], ROOT
            )
            if result.returncode != 0:
                self.report.fail(dist.name, f"{dist.name}: uv build failed", _output(result))
                continue
            stem = f"{_normalize(dist.name).replace('-', '_')}-"
            wheels = sorted(self.out.glob(f"{stem}*.whl"))
            expected = f"{stem}{dist.version}-py3-none-any.whl"
            names = [wheel.name for wheel in wheels]
            sdist = f"{stem}{dist.version}.tar.gz"
            if not self.report.check(
                dist.name,
                expected in names and (self.out / sdist).exists(),
                f"{dist.name}: built {sdist} and {expected}",
                f"found {names or 'no wheel'} (the version table says {dist.version})",
            ):
                continue
            problems = inspect_wheel(self.out / expected, dist)
            if self.report.check(
                dist.name,
                not problems,
                f"{dist.name}: wheel holds {dist.module}/ with py.typed, METADATA {dist.version}",
                "\n".join(problems),
            ):
                self.wheels[dist.name] = self.out / expected

    def _venv(self, name: str) -> Path | None:
        venv = self.work / "venvs" / name
        result = run(["uv", "venv", "--quiet", "--python", self.python, venv], self.work)
        if result.returncode != 0:
            self.report.fail(name, f"{name}: uv venv failed", _output(result))
            return None
        return venv

    def _install(self, subject: str, venv: Path, wheels: Sequence[Path]) -> bool:
        result = run(
            ["uv", "pip", "install", "--quiet", "--python", _bin(venv, "python"), *wheels],
            self.work,
        )
        names = " + ".join(wheel.name for wheel in wheels)
        return self.report.check(
            subject, result.returncode == 0, f"{subject}: installs {names}", _output(result)
        )

    def _pip_check(self, subject: str, venv: Path) -> None:
        result = run(["uv", "pip", "check", "--python", _bin(venv, "python")], self.work)
        self.report.check(
            subject, result.returncode == 0, f"{subject}: uv pip check passes", _output(result)
        )

    def _installed(self, subject: str, venv: Path) -> dict[str, str] | None:
        result = run(
            ["uv", "pip", "list", "--format", "json", "--python", _bin(venv, "python")],
            self.work,
        )
        if result.returncode != 0:
            self.report.fail(subject, f"{subject}: uv pip list failed", _output(result))
            return None
        rows = json.loads(result.stdout)
        return {_normalize(row["name"]): row["version"] for row in rows}

    def _import(self, subject: str, venv: Path, dist: Dist) -> None:
        code = (
            "import importlib.metadata, sys; "
            f"import {dist.module} as m; "
            f"print(m.__file__); print(importlib.metadata.version({dist.name!r}))"
        )
        result = run([_bin(venv, "python"), "-c", code], self.work, COMMAND_TIMEOUT)
        if result.returncode != 0:
            self.report.fail(subject, f"{subject}: import {dist.module} failed", _output(result))
            return
        where, _, version = result.stdout.strip().partition("\n")
        inside = Path(where).resolve().is_relative_to(venv.resolve())
        self.report.check(
            subject,
            inside and version.strip() == dist.version,
            f"{subject}: import {dist.module} {version.strip()} from the venv",
            f"imported {where} version {version.strip()}; expected {dist.version} under {venv}",
        )

    def check_core(self, core: Dist) -> None:
        """The core alone: only attrs, cattrs and what they require get installed."""
        subject = core.name
        self.report.section(f"{subject} alone in a fresh venv")
        wheel = self.wheels.get(core.name)
        venv = self._venv("core")
        if wheel is None or venv is None:
            self.report.fail(subject, f"{subject}: skipped (no wheel or no venv)")
            return
        if not self._install(subject, venv, [wheel]):
            return
        self._pip_check(subject, venv)
        self._import(subject, venv, core)
        probe = run([_bin(venv, "python"), "-c", _METADATA_PROBE], self.work, COMMAND_TIMEOUT)
        installed = self._installed(subject, venv)
        if probe.returncode != 0 or installed is None:
            self.report.fail(subject, f"{subject}: cannot read the venv's metadata", probe.stderr)
            return
        graph: dict[str, list[str]] = json.loads(probe.stdout)
        direct = set(graph.get(CORE, []))
        self.report.check(
            subject,
            direct == CORE_DEPENDENCIES,
            f"{subject}: declares exactly {sorted(CORE_DEPENDENCIES)} as dependencies",
            f"declares {sorted(direct)}",
        )
        allowed = requirement_closure(graph, CORE_DEPENDENCIES)
        extra = sorted(set(installed) - allowed - {CORE})
        listing = ", ".join(f"{name} {installed[name]}" for name in sorted(installed))
        self.report.check(
            subject,
            not extra and set(installed) >= CORE_DEPENDENCIES,
            f"{subject}: installs only attrs, cattrs and their requirements ({listing})",
            f"unexpected: {extra}; allowed from attrs/cattrs metadata: {sorted(allowed)}",
        )

    def check_role(self, role: Dist, core: Dist, roles: Sequence[str]) -> None:
        """One role with the core wheel only, in its own fresh venv."""
        subject = role.name
        self.report.section(f"{subject} + {core.name} wheels in a fresh venv")
        wheel, core_wheel = self.wheels.get(role.name), self.wheels.get(core.name)
        venv = self._venv(role.name)
        if wheel is None or core_wheel is None or venv is None:
            self.report.fail(subject, f"{subject}: skipped (no wheel or no venv)")
            return
        if not self._install(subject, venv, [wheel, core_wheel]):
            return
        self._pip_check(subject, venv)
        self._import(subject, venv, role)
        installed = self._installed(subject, venv)
        if installed is not None:
            for name in sorted(FORBIDDEN[role.name]):
                self.report.check(
                    subject,
                    name not in installed,
                    f"{subject}: no {name} in the environment",
                    f"{name} {installed.get(name)} was installed; rerun with --keep and find "
                    f"who pulls it: uv pip tree --invert --package {name} "
                    f"--python {_bin(venv, 'python')}",
                )
            major = MCP_MAJOR.get(role.name)
            if major is not None:
                got = installed.get("mcp") or ""
                self.report.check(
                    subject,
                    got.split(".")[0] == major,
                    f"{subject}: mcp {major}.x ({got})",
                    f"mcp {got or 'absent'} was installed, not the {major}.x line the pins ask",
                )
            others = sorted(set(installed) & set(roles) - {role.name})
            self.report.check(
                subject, not others, f"{subject}: no other role installed", f"found {others}"
            )
        self._command(subject, venv, COMMANDS[role.name])
        if role.name == "a2c-agent":
            self._bridge_needs_extra(subject, venv)

    def _bridge_needs_extra(self, subject: str, venv: Path) -> None:
        """Without the ``mcp`` extra, ``a2c-agent mcp`` names the extra instead of a traceback."""
        argv: list[str | Path] = [
            _bin(venv, "a2c-agent"),
            "--server",
            "http://127.0.0.1:9",
            "--office",
            "o",
            "mcp",
        ]
        result = run(argv, self.work, COMMAND_TIMEOUT)
        self.report.check(
            subject,
            result.returncode == 1
            and "a2c-agent[mcp]" in result.stderr
            and "Traceback" not in result.stderr,
            f"{subject}: `a2c-agent mcp` without the extra names 'a2c-agent[mcp]'",
            _output(result),
        )

    def _command(self, subject: str, venv: Path, command: str) -> None:
        program = _bin(venv, command)
        if not program.exists():
            self.report.fail(
                subject,
                f"{subject}: console command {command!r} is not installed "
                "(no [project.scripts] entry in the wheel?)",
            )
            return
        result = run([program, "--help"], self.work, COMMAND_TIMEOUT)
        text = _output(result)
        hint = ""
        if "ModuleNotFoundError" in text or "ImportError" in text or "AttributeError" in text:
            hint = " (its entry point does not import: is the CLI module written yet?)"
        self.report.check(
            subject,
            result.returncode == 0 and bool(result.stdout.strip()),
            f"{subject}: `{command} --help` prints its usage{hint}",
            text if result.returncode != 0 else "exit 0 but nothing on stdout",
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Build, install and check every published distribution; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="tools/wheel_check.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter for the fresh venvs (default: the one running this script)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)

    if shutil.which("uv") is None:
        print("error: uv is not on PATH", file=sys.stderr)
        return 2
    dists = load_distributions(ROOT)
    core = next(dist for dist in dists if dist.name == CORE)
    roles = [dist for dist in dists if dist.name != CORE]
    unknown = sorted({dist.name for dist in roles} - set(FORBIDDEN))
    if unknown:
        print(f"error: no wheel checks defined for {unknown}", file=sys.stderr)
        return 2

    report = Report()
    work = Path(tempfile.mkdtemp(prefix="a2c-wheel-check-"))
    print(f"wheel check in {work} with {args.python}", flush=True)
    try:
        checker = Checker(report, work, args.python)
        checker.build(dists)
        checker.check_core(core)
        for role in roles:
            checker.check_role(role, core, [dist.name for dist in roles])
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    report.section("summary")
    if report.failures:
        print(f"wheel check FAILED: {len(report.failures)} failed, {report.passed} passed")
        for failure in report.failures:
            print(f"  - {failure}")
        return 1
    print(f"wheel check passed: {report.passed} checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
