"""One environment rule for the three commands: a variable that is set but
empty is a usage error naming it, for ``a2c-server``, ``a2c-computer`` and ``a2c-agent``
alike (the Computer used to read it as "unset"), and the three pages say so."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from a2c_testkit.processes import bin_path

DOCS = Path(__file__).resolve().parents[1] / "docs"
COMMANDS = ("a2c-server", "a2c-computer", "a2c-agent")


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("A2C_")}
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=120, env={**base, **env},
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "env", "var"),
    [
        (["a2c-server", "--port", "0"], {"A2C_SERVER_AUTH_TOKEN": ""}, "A2C_SERVER_AUTH_TOKEN"),
        (["a2c-computer", "run", "--config", "c.json", "--server", "http://127.0.0.1:9",
          "--office", "o", "--name", "box"], {"A2C_TOKEN": ""}, "A2C_TOKEN"),
        (["a2c-agent", "--server", "http://127.0.0.1:9", "--office", "o", "room"],
         {"A2C_TOKEN": ""}, "A2C_TOKEN"),
    ],
)  # fmt: skip
def test_an_empty_variable_is_a_usage_error_in_every_command(
    argv: list[str], env: dict[str, str], var: str
) -> None:
    done = _run([bin_path(argv[0]), *argv[1:]], env)
    assert done.returncode == 2, done.stderr
    assert f"{var} is set but empty: unset it or give a value" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("page", ["server.md", "computer.md", "agent.md"])
def test_each_page_states_the_one_rule(page: str) -> None:
    text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
    assert "set but empty" in text
    assert "the one rule of all three commands" in text
    assert "counts as unset" not in text
