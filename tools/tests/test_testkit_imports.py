"""A test MCP server (``python -m a2c_testkit.mcp_servers.<name>``) imports the testkit package
first; its names load on first use, so such a child does not pay for python-socketio and the
Server on every start."""

import subprocess
import sys

import a2c_testkit


def test_every_public_name_resolves() -> None:
    for name in a2c_testkit.__all__:
        assert getattr(a2c_testkit, name) is not None, name


def test_a_test_mcp_server_imports_no_socketio() -> None:
    probe = (
        "import sys, a2c_testkit.mcp_servers.scene, a2c_testkit.mcp_servers.desk\n"
        "heavy = ('socketio', 'redis', 'a2c_server', 'a2c_computer')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
