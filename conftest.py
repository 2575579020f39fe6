"""Workspace-wide pytest configuration: hypothesis profiles, logging restored after each test.

``fast`` (default) keeps local runs quick; ``ci`` (selected by ``.ci/run`` through
``HYPOTHESIS_PROFILE=ci``) explores more examples. Neither has a deadline: the suite must
be deterministic on a noisy 2-core machine, and wall-clock deadlines are not.
"""

import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "fast", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# 100 derandomized examples: CI sees the same cases on every run, and the whole of
# .ci/run must stay under 15 minutes on a 2-core machine (150 cost ~25 s more, 300 ~2 minutes).
settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

# Computers keep skills under the user's data directory by default: tests (and the
# processes they start) get a private one, so neither the developer's skills leak in
# nor test skills out.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="a2c-test-data-")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers per core. Most tests wait (process starts, sockets, timeouts
    that must pass), so one worker per core leaves the CPUs half idle: the Computer's tests
    took 131 s with 2 workers and 77 s with 4 on 2 cores, at the same CPU time."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 * (cores or 1)


# Longest first: xdist's work stealing then ends the run with short tests on every worker,
# instead of one worker finishing a minute-long test alone. Files, most expensive first (the
# durations of a whole run); a test not listed keeps its place in collection order after them.
_LONG_FIRST = (
    "tests-integration/test_docs_examples.py",
    "tests-integration/test_triangle_blobs.py",
    "tests-integration/",
    "packages/a2c-computer/tests/",
    "packages/a2c-agent/tests/",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(config.rootpath)

    def rank(item: pytest.Item) -> int:
        path = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        return next(
            (i for i, prefix in enumerate(_LONG_FIRST) if path.startswith(prefix)),
            len(_LONG_FIRST),
        )

    items.sort(key=rank)  # stable: each group keeps its collection order


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Undo what an in-process CLI run does to logging (it owns the process when run for real).

    ``main()`` installs a root handler on the test's captured stderr and quiets loggers
    such as ``a2c_computer.skills``; left in place, a later test on the same xdist worker
    would miss the records it waits for, depending on which tests ran before it.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {
        name: logger.level
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, logger in logging.Logger.manager.loggerDict.items():
        if isinstance(logger, logging.Logger):
            logger.setLevel(levels.get(name, logging.NOTSET))
