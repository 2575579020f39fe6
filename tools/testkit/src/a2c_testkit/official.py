"""The official ``a2c-smcp`` SDK in throwaway virtual environments, for the interop suite.

Public API:

- ``fastmcp_venv(version) -> Path``: the same for ``fastmcp==<version>`` (a FastMCP 4 server
  runs as a subprocess of that python); ``package_venv`` builds any such venv.
- ``official_venv(version) -> Path``: the python of a venv holding ``a2c-smcp[cli]==<version>``
  (the ``cli`` extra: the SDK's Computer module imports prompt_toolkit),
  built once per version under the cache dir (``$A2C_INTEROP_CACHE`` or
  ``~/.cache/a2c-interop``) and reused by later runs. Safe when several pytest-xdist workers
  ask at once: one builds under an exclusive file lock, the others wait for it, and a venv
  only counts once its marker file is written (a half-built one is rebuilt).
- ``run_official(python, script, *args, timeout=...) -> OfficialRun``: run a small script with
  that python and wait for it; ``start_official(...) -> OfficialProcess`` starts one in the
  background (an official Computer that must stay up while the test works).

The venv is filled from the package index by name only (``uv pip install`` when ``uv`` is on
the PATH, else the venv's own pip), so a fresh machine and CI build it the same way. The
official code runs only in those child processes: nothing here imports it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "OfficialProcess",
    "OfficialRun",
    "cache_root",
    "fastmcp_venv",
    "official_venv",
    "package_venv",
    "run_official",
    "start_official",
]

_READY = "a2c-interop-ready"
_BUILD_TIMEOUT = 900.0


def cache_root() -> Path:
    """Where the venvs live: ``$A2C_INTEROP_CACHE`` or ``~/.cache/a2c-interop``."""
    configured = os.environ.get("A2C_INTEROP_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "a2c-interop"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _python_in(root: Path) -> Path:
    return root / "bin" / "python"


# 0.2.2's Computer imports yaml without declaring PyYAML; a user of its README installs it too.
_UNDECLARED = ("pyyaml",)


def _install(python: Path, wanted: Sequence[str]) -> None:
    uv = shutil.which("uv")
    if uv:
        argv = [uv, "pip", "install", "--python", str(python), "--quiet", *wanted]
    else:
        argv = [str(python), "-m", "pip", "install", "--quiet", *wanted]
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "UV_PROJECT"}}
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=_BUILD_TIMEOUT, env=env, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"installing {wanted} failed:\n{done.stdout}\n{done.stderr}")


def package_venv(key: str, dist: str, version: str, *wanted: str) -> Path:
    """The python of a cached venv ``<cache>/<key>`` holding ``wanted`` (pip requirements),
    built on first use; ``dist`` must then be installed at ``version``."""
    root = cache_root() / key
    ready = root / _READY
    python = _python_in(root)
    requirement = " ".join(wanted)
    if _is_ready(ready, python, requirement):
        return python
    with _locked(cache_root() / f"{key}.lock"):
        if _is_ready(ready, python, requirement):
            return python
        shutil.rmtree(root, ignore_errors=True)
        # pip is only needed when uv is missing; venv's ensurepip works offline either way.
        venv.EnvBuilder(with_pip=shutil.which("uv") is None, symlinks=True).create(root)
        _install(python, wanted)
        check = subprocess.run(
            [str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check.stdout.strip() != version:
            raise RuntimeError(f"venv at {root} holds {dist} {check.stdout!r}: {check.stderr}")
        ready.write_text(requirement + "\n")
    return python


def official_venv(version: str) -> Path:
    """The python of a cached venv with ``a2c-smcp[cli]==version`` (built on first use)."""
    return package_venv(version, "a2c-smcp", version, f"a2c-smcp[cli]=={version}", *_UNDECLARED)


def fastmcp_venv(version: str = "4.1.6") -> Path:
    """The python of a cached venv with ``fastmcp==version``: FastMCP 4 pulls many packages,
    kept out of the workspace; its servers run as subprocesses of that python."""
    return package_venv(f"fastmcp-{version}", "fastmcp", version, f"fastmcp=={version}")


def _is_ready(ready: Path, python: Path, requirement: str) -> bool:
    # The marker names what was installed: a venv built for another requirement is rebuilt.
    try:
        return python.exists() and ready.read_text().strip() == requirement
    except OSError:
        return False


def _env() -> dict[str, str]:
    # The child must not see our workspace's packages (PYTHONPATH, a venv on the PATH).
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass(frozen=True)
class OfficialRun:
    """What a finished official-SDK script returned."""

    returncode: int
    stdout: str
    stderr: str

    def check(self) -> str:
        """The stdout, or an AssertionError quoting both streams when the script failed."""
        if self.returncode != 0:
            raise AssertionError(
                f"official script exited {self.returncode}\n--- stdout\n{self.stdout}"
                f"\n--- stderr\n{self.stderr}"
            )
        return self.stdout


def _argv(python: Path, script: str | Path, args: Sequence[str]) -> list[str]:
    if isinstance(script, Path):
        return [str(python), str(script), *args]
    return [str(python), "-c", script, *args]


def run_official(
    python: Path, script: str | Path, *args: str, timeout: float = 120.0
) -> OfficialRun:
    """Run ``script`` (source text, or a path) with the official venv's python and wait."""
    done = subprocess.run(
        _argv(python, script, args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
        check=False,
    )
    return OfficialRun(done.returncode, done.stdout, done.stderr)


class OfficialProcess:
    """An official-SDK script running in the background; its output goes to ``log_path``."""

    def __init__(self, popen: subprocess.Popen[bytes], log_path: Path) -> None:
        self.popen = popen
        self.log_path = log_path

    def output(self) -> str:
        """Everything the script printed so far (stdout and stderr)."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        """Stop the script (and what it spawned) and wait for it."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, 15)
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, 9)
                self.popen.wait(timeout=20)


def start_official(python: Path, script: str | Path, *args: str, log_path: Path) -> OfficialProcess:
    """Start ``script`` with the official venv's python in its own process group."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        popen = subprocess.Popen(
            _argv(python, script, args),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=_env(),
            start_new_session=True,
        )
    return OfficialProcess(popen, log_path)


if __name__ == "__main__":  # pragma: no cover - a convenience: prebuild the venvs in CI
    # "0.2.2" is an official SDK version; "fastmcp==4.1.6" the FastMCP server's venv.
    for wanted in sys.argv[1:] or ["0.2.2", "0.4.2", "fastmcp==4.1.6"]:
        name, _, version = wanted.rpartition("==")
        print(fastmcp_venv(version) if name == "fastmcp" else official_venv(wanted))
