"""What README.md says about running the tests: the quick subset names
files that exist, and the size of the whole suite is the one pytest collects (within 10 %:
the number is rounded and the suite grows)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _development() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Development") :]
    return section[: section.index("\n## ")]


def test_the_quick_subset_names_files_that_exist() -> None:
    quick = next(line for line in _development().splitlines() if "# quick" in line)
    paths = re.findall(r"\b(?:tests-integration|packages)/\S+", quick)
    assert paths and all((ROOT / path).exists() for path in paths), quick


def test_the_stated_size_of_the_suite_is_what_pytest_collects() -> None:
    stated = re.search(r"# all tests: about ([\d,]+) tests", _development())
    assert stated is not None
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    collected = re.search(r"(\d+) tests? collected", done.stdout)
    assert collected is not None, done.stdout[-2000:] + done.stderr[-2000:]
    count, said = int(collected[1]), int(stated[1].replace(",", ""))
    assert abs(count - said) <= said * 0.10, (count, said)
