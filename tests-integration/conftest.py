"""Integration fixtures: real commands as child processes, logs attached to failures.

Every process a test starts through ``procs`` is registered; when the test fails, the
tail of each process log is added to the report, so a red CI run shows what the Server,
the Computer and its MCP servers printed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from a2c_testkit.processes import ManagedProcess


class ProcessRegistry:
    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.processes: list[ManagedProcess] = []

    def track(self, process: ManagedProcess) -> ManagedProcess:
        self.processes.append(process)
        return process


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if report.failed:
        registry: ProcessRegistry | None = getattr(item, "_a2c_processes", None)
        for process in registry.processes if registry else []:
            report.sections.append((f"log of {process.name}", process.logs()[-8000:]))
    return report


@pytest.fixture
def procs(request: pytest.FixtureRequest, tmp_path: Path) -> ProcessRegistry:
    registry = ProcessRegistry(tmp_path / "logs")
    request.node._a2c_processes = registry
    return registry


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Computers spool blobs under the user's cache dir: keep tests out of the real one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
