"""Code, tests and docs name rules and behaviours, never tracker numbers.

A reference to a numbered tracker entry means nothing to a reader without the tracker and
goes stale when the entry is closed; the rule's name says what the code does. This scans
every tracked ``.py``, ``.md`` and ``.toml`` file (changelogs included) for the word
followed by a number, and for a bare ``(#NN)``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = (".py", ".md", ".toml")
TRACKER_REF = re.compile(r"\bissues?\s+#?\d+|\(#\d+\)", re.IGNORECASE)


def tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *(f"*{suffix}" for suffix in SUFFIXES)],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [ROOT / name for name in listed.split("\0") if name]


def tracker_refs(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of every line that cites a tracker entry by number."""
    return [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if TRACKER_REF.search(line)
    ]


def test_the_scan_sees_the_forms_it_forbids() -> None:
    word, number = "issue", "41"  # kept apart so that this file does not match itself
    cited = [f"Rules ({word} {number}):", f"see {word.title()}s {number}-50"]
    cited += [f"(#{number}) fixed", f"{word.upper()} #{number}"]
    assert [n for n, _ in tracker_refs("\n".join(cited))] == [1, 2, 3, 4]
    prose = ["the issue is the wait", "HTTP 421 (misdirected)", "color: #5cc07c", "item #1"]
    assert tracker_refs("\n".join(prose)) == []


def test_no_tracker_numbers_in_code_tests_or_docs() -> None:
    files = tracked_files()
    assert any(path.name == "operations.md" for path in files)  # the listing found the docs
    found = {
        f"{path.relative_to(ROOT)}:{number}": line
        for path in files
        if path.is_file()
        for number, line in tracker_refs(path.read_text(encoding="utf-8", errors="replace"))
    }
    assert found == {}, "name the rule or behaviour instead of the tracker entry"
