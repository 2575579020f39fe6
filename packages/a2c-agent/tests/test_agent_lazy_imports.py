"""The SDK loads its own names on first use and the CLI loads the Agent only to connect:
``--help``, usage errors and refused destinations must not pay for python-socketio."""

import subprocess
import sys

import a2c_agent


def test_every_public_name_resolves() -> None:
    for name in a2c_agent.__all__:
        assert getattr(a2c_agent, name) is not None, name
        assert name in dir(a2c_agent), name


def test_the_cli_entry_imports_no_client_library() -> None:
    probe = (
        "import sys, a2c_agent._cli._main\n"
        "heavy = ('socketio', 'engineio', 'redis', 'a2c_agent._agent')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
