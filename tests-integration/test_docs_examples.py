"""Every ```python block in docs/ runs, so the documentation cannot rot.

A block preceded by ``<!-- no-run -->`` is illustrative only (a fragment, or something that
waits for Ctrl-C). Blocks run in a fresh interpreter, each file's blocks in order in one
script, so later blocks may use names from earlier ones.

A page whose text contains ``<!-- docs-test: deployment -->`` talks to a live deployment,
exactly as a reader's code would after following docs/getting-started.md: the test starts
the real ``a2c-server`` and ``a2c-computer run`` (Computer ``box-1`` hosting the example MCP
server ``desk`` with ``auto_apply`` on), waits until the Computer has joined, and runs the
page with ``A2C_SERVER_URL``, ``A2C_OFFICE`` and ``A2C_COMPUTER`` pointing at it. Every page
gets a deployment of its own, so no page sees another's notes or panels, but each page runs
twice in a row against that one deployment: a reader runs an example again, and an example
that only holds on a fresh deployment (a note list, a panel count) misleads them.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from a2c_agent import AsyncAgent
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config

DOCS = Path(__file__).resolve().parents[1] / "docs"
FENCE = re.compile(r"(?P<marker><!-- no-run -->\s*\n)?```python\n(?P<code>.*?)```", re.S)
DEPLOYMENT_MARKER = "<!-- docs-test: deployment -->"
COMPUTER = "box-1"
SCRIPT_TIMEOUT = 300


def runnable_blocks(path: Path) -> list[str]:
    return [m["code"] for m in FENCE.finditer(path.read_text(encoding="utf-8")) if not m["marker"]]


def needs_deployment(path: Path) -> bool:
    return DEPLOYMENT_MARKER in path.read_text(encoding="utf-8")


PAGES = sorted(p for p in DOCS.glob("*.md") if runnable_blocks(p))


def test_some_pages_have_runnable_examples() -> None:
    assert len(PAGES) >= 2


def test_the_role_guides_run_against_a_deployment() -> None:
    live = {p.name for p in PAGES if needs_deployment(p)}
    assert {"getting-started.md", "computer.md", "agent.md"} <= live


NUMBERS = {
    word: i
    for i, word in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    )
}
COUNTED_LIST = re.compile(
    r"\b(?P<count>[a-z]+)\s+tools\s+\((?P<names>(?:`[^`]+`,?\s*(?:and\s+)?)+)\)"
)


def test_documented_tool_counts_match_their_lists() -> None:
    """A count like "six tools (`a`, ...)" is one a reader checks: it must add up."""
    checked = 0
    for page in sorted(DOCS.glob("*.md")):
        for match in COUNTED_LIST.finditer(page.read_text(encoding="utf-8")):
            if match["count"] not in NUMBERS:
                continue
            names = re.findall(r"`([^`]+)`", match["names"])
            assert NUMBERS[match["count"]] == len(names), f"{page.name}: {match[0]!r}"
            checked += 1
    assert checked >= 1


def _run_page(page: Path, tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = tmp_path / f"{page.stem}.py"
    script.write_text("\n\n".join(runnable_blocks(page)), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        stdin=subprocess.DEVNULL,  # no terminal: inputs never prompt
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
        cwd=tmp_path,
        env=env,
    )


def _assert_ran(page: Path, done: subprocess.CompletedProcess[str], attempt: str = "first") -> None:
    assert done.returncode == 0, (
        f"{page.name} examples failed on the {attempt} run:\n{done.stdout}\n{done.stderr}"
    )


async def _wait_for_computer(server_url: str, office: str) -> None:
    """Wait until ``box-1`` is in the office with its tools, then free the Agent seat."""
    async with AsyncAgent(server_url, name=f"docs-probe-{uuid.uuid4().hex[:8]}") as probe:
        await probe.join_office(office)
        await eventually(lambda: probe.tools.get(COMPUTER), what=f"{COMPUTER}'s tools")
        # An office holds one Agent: leave explicitly (acknowledged by the Server) so the
        # page's own Agent never races this one's disconnect.
        await probe.leave_office()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
async def test_docs_page_examples_run(page: Path, tmp_path: Path, procs: object) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if not needs_deployment(page):
        _assert_ran(page, await asyncio.to_thread(_run_page, page, tmp_path, env))
        return
    logs = procs.log_dir  # type: ignore[attr-defined]
    track = procs.track  # type: ignore[attr-defined]
    office = f"office-{uuid.uuid4().hex[:8]}"
    config = write_config(
        tmp_path / "computer.json",
        [
            {
                "type": "stdio",
                "name": "desk",
                "default_tool_meta": {"auto_apply": True},
                "server_parameters": {
                    "command": sys.executable,
                    "args": ["-m", "a2c_computer.examples.desk_server"],
                },
            }
        ],
    )
    async with (
        server_process(logs, track=track) as server,
        computer_process(
            logs, config=config, server_url=server.url, office=office, name=COMPUTER, track=track
        ),
    ):
        await _wait_for_computer(server.url, office)
        env |= {"A2C_SERVER_URL": server.url, "A2C_OFFICE": office, "A2C_COMPUTER": COMPUTER}
        for attempt in ("first", "second"):
            done = await asyncio.to_thread(_run_page, page, tmp_path, env)
            _assert_ran(page, done, attempt)
