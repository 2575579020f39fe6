"""Every ```python block in docs/ runs, so the documentation cannot rot.

A block preceded by ``<!-- no-run -->`` is illustrative only (a fragment, or something that
waits for Ctrl-C). Blocks run in a fresh interpreter, each file's blocks in order in one
script, so later blocks may use names from earlier ones.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
FENCE = re.compile(r"(?P<marker><!-- no-run -->\s*\n)?```python\n(?P<code>.*?)```", re.S)


def runnable_blocks(path: Path) -> list[str]:
    return [m["code"] for m in FENCE.finditer(path.read_text(encoding="utf-8")) if not m["marker"]]


PAGES = sorted(p for p in DOCS.glob("*.md") if runnable_blocks(p))


def test_some_pages_have_runnable_examples() -> None:
    assert len(PAGES) >= 2


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_docs_page_examples_run(page: Path, tmp_path: Path) -> None:
    script = tmp_path / f"{page.stem}.py"
    script.write_text("\n\n".join(runnable_blocks(page)), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, f"{page.name} examples failed:\n{done.stdout}\n{done.stderr}"
