"""The package loads its public names on first use, and each CLI command imports only what it
runs: ``--help``, usage errors and ``config convert`` must not pay for python-socketio, the MCP
client and the Computer (about a second of CPU on every start)."""

import subprocess
import sys

import a2c_computer


def test_every_public_name_resolves() -> None:
    for name in a2c_computer.__all__:
        assert getattr(a2c_computer, name) is not None, name
        assert name in dir(a2c_computer), name


def test_the_cli_entry_and_config_convert_import_no_client_library() -> None:
    probe = (
        "import sys, a2c_computer._cli, a2c_computer._cli._convert_cmd\n"
        "heavy = ('socketio', 'engineio', 'mcp', 'redis', 'a2c_computer._app')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
