"""Upstream internals stay in the fences: ``tools/check_upstream.py`` on the tree and on fakes.

The first test runs the check on this repository. The others build small fake role
packages in ``tmp_path`` with one kind of touch each ((a) an internal import, (b) a private
or internal attribute, (c) a private override in an upstream subclass) and show that the
check reports it outside the fence and accepts the same code inside ``_upstream.py``, so
the first test cannot pass by the check seeing nothing.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from a2c_testkit.scripts import load_script

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "tools" / "check_upstream.py"


check_upstream = load_script(SCRIPT, "a2c_tools_check_upstream")
UPSTREAM = check_upstream.Upstream()  # the libraries' names, learnt once for all tests


def _outside(root: Path) -> list[str]:
    return [str(t) for t in check_upstream.check(root, UPSTREAM) if not t.inside]


def _inside(root: Path) -> list[str]:
    return [str(t) for t in check_upstream.check(root, UPSTREAM) if t.inside]


def _package(root: Path, role: str = "a2c_server") -> Path:
    package = root / "packages" / role.replace("_", "-") / "src" / role
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text('"""A fake role package."""\n')
    return package


def _write(package: Path, name: str, source: str) -> None:
    path = package / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))


def test_the_tree_touches_upstream_internals_only_inside_the_fences() -> None:
    outside = _outside(REPO)
    assert outside == [], "\n".join(outside)


# (a) imports --------------------------------------------------------------------------

INTERNAL_IMPORTS = """\
    import socketio
    from engineio import exceptions, packet
    from engineio.async_socket import AsyncSocket
    from redis._parsers import Encoder
    from mcp.client.auth import OAuthClientProvider

    ACK = socketio.packet.ACK
    DONE = socketio.exceptions.TimeoutError
    """


def test_internal_imports_are_reported_outside_the_fence(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _write(package, "_mod.py", INTERNAL_IMPORTS)
    fence = "(move it into packages/a2c-server/src/a2c_server/_upstream.py)"
    assert _outside(tmp_path) == [
        f"packages/a2c-server/src/a2c_server/_mod.py:2: import of python-engineio internal module engineio.packet {fence}",
        f"packages/a2c-server/src/a2c_server/_mod.py:3: import of python-engineio internal module engineio.async_socket {fence}",
        f"packages/a2c-server/src/a2c_server/_mod.py:4: import of private redis name redis._parsers.Encoder {fence}",
        f"packages/a2c-server/src/a2c_server/_mod.py:7: python-socketio internal module socketio.packet {fence}",
    ]


def test_internal_imports_are_allowed_inside_the_fence(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _write(package, "_upstream.py", INTERNAL_IMPORTS)
    assert _outside(tmp_path) == []
    assert len(_inside(tmp_path)) == 4  # --list shows them


# (b) attributes -----------------------------------------------------------------------

ATTRIBUTES = """\
    class Pipe:
        def __init__(self, conn, session, sio):
            self._conn = conn
            self._mine = 1
            self._ours = conn._writer  # redis-py's stream writer
            self.stamp = session._stamp  # mcp's request stamp
            self.reader = getattr(conn, "_reader", None)
            self.table = sio.eio.sockets  # python-engineio's session table
            self.rooms = sio.manager.rooms
            self.stranger = conn._buffer_cutoff  # nobody here defines it
            self.fine = (self._mine, other()._mine, conn.point._replace(x=1), websocket.closed)

        def _helper(self):
            return self._conn.pack_commands([("PING",)])
    """


def test_private_and_internal_attributes_are_reported_outside_the_fence(tmp_path: Path) -> None:
    package = _package(tmp_path, "a2c_computer")
    _write(package, "_pipe.py", ATTRIBUTES)
    found = [line.split(" (move it into ")[0] for line in _outside(tmp_path)]
    path = "packages/a2c-computer/src/a2c_computer/_pipe.py"
    assert found == [
        f"{path}:5: private _writer (redis-py's connection stream writer)",
        f"{path}:6: private _stamp (mcp's ClientSession request stamp (the era's headers and _meta))",
        f"{path}:7: private _reader (redis-py's connection stream reader)",
        f"{path}:8: undocumented sockets (python-engineio's session table)",
        f"{path}:9: undocumented rooms (python-socketio's room table)",
        f"{path}:10: private attribute _buffer_cutoff (not one of ours)",
        f"{path}:14: undocumented pack_commands (redis-py's connection encoder)",
    ]
    assert all(
        line.endswith("(move it into packages/a2c-computer/src/a2c_computer/_upstream.py)")
        for line in _outside(tmp_path)
    )


def test_internal_attributes_are_allowed_inside_a_fence_subpackage(tmp_path: Path) -> None:
    package = _package(tmp_path, "a2c_computer")
    _write(package, "_upstream/__init__.py", '"""The fence."""\n')
    _write(package, "_upstream/_redis.py", ATTRIBUTES)
    assert _outside(tmp_path) == []
    assert len(_inside(tmp_path)) == 7


def test_our_own_private_names_are_not_touches(tmp_path: Path) -> None:
    # A name any of our packages defines may be read anywhere, except a known upstream one
    # on another object (our own self._reader is fine, conn._reader is not).
    package = _package(tmp_path, "a2c_agent")
    _write(
        package,
        "_own.py",
        """\
        import logging

        class Stream:
            __slots__ = ("_queue",)

            def _offer(self, item):
                self._reader = item
                return self._reader

        def tag(handler: logging.Handler, stream: Stream) -> None:
            handler._a2c_owned = True
            stream._offer(stream._queue)
            print(getattr(handler, "_a2c_owned", False))
        """,
    )
    assert _outside(tmp_path) == []


# (c) subclasses -----------------------------------------------------------------------

SUBCLASSES = """\
    import socketio
    from mcp.client.auth import OAuthClientProvider

    class Server(socketio.AsyncServer):
        def __init__(self):
            super().__init__()
            self._pending = {}  # ours: AsyncServer has no _pending

        async def _handle_event(self, eio_sid, namespace, id, data):
            self._pending.clear()
            await super()._handle_event(eio_sid, namespace, id, data)

        def _over_limit(self):
            return bool(self._pending)

    class Provider(OAuthClientProvider):
        async def flow(self, request):
            return await self._refresh_token()
    """


def test_private_overrides_of_upstream_classes_are_reported_outside_the_fence(
    tmp_path: Path,
) -> None:
    package = _package(tmp_path)
    _write(package, "_server.py", SUBCLASSES)
    found = [line.split(" (move it into ")[0] for line in _outside(tmp_path)]
    path = "packages/a2c-server/src/a2c_server/_server.py"
    assert found == [
        f"{path}:9: override of socketio.AsyncServer._handle_event",
        f"{path}:11: use of socketio.AsyncServer._handle_event",
        f"{path}:18: use of mcp.client.auth.OAuthClientProvider._refresh_token",
    ]


def test_private_overrides_are_allowed_inside_the_fence(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _write(package, "_upstream.py", SUBCLASSES)
    assert _outside(tmp_path) == []
    assert len(_inside(tmp_path)) == 3


def test_a_subclass_of_a_fence_class_is_held_to_the_same_rules(tmp_path: Path) -> None:
    # The fence may define the upstream subclass; a class deriving from it elsewhere still
    # may not override or call the upstream's private methods. An unrelated class of ours
    # with a method of the same name is not a touch.
    package = _package(tmp_path)
    _write(
        package,
        "_upstream.py",
        """\
        import socketio

        class FencedServer(socketio.AsyncServer):
            async def _handle_event(self, eio_sid, namespace, id, data):
                await self.on_event(eio_sid, namespace, id, data)
                await super()._handle_event(eio_sid, namespace, id, data)
        """,
    )
    _write(
        package,
        "_server.py",
        """\
        from ._upstream import FencedServer

        class Server(FencedServer):
            async def on_event(self, eio_sid, namespace, id, data):
                await self._send_packet(eio_sid, None)

            async def _trigger_event(self, event, namespace, *args):
                return None

        class Plan:
            def _send_packet(self):
                return self._handle_event

            def _handle_event(self):
                return None
        """,
    )
    found = [line.split(" (move it into ")[0] for line in _outside(tmp_path)]
    path = "packages/a2c-server/src/a2c_server/_server.py"
    assert found == [
        f"{path}:5: use of socketio.AsyncServer._send_packet",
        f"{path}:7: override of socketio.AsyncServer._trigger_event",
    ]


def test_the_command_exits_1_with_one_line_per_touch_and_lists_the_fence(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _write(package, "_mod.py", "from engineio.async_socket import AsyncSocket\n")
    _write(package, "_upstream.py", "from engineio import payload\n")
    run = [sys.executable, str(SCRIPT), "--root", str(tmp_path)]
    failed = subprocess.run(run, capture_output=True, text=True, timeout=120, check=False)
    assert failed.returncode == 1, failed.stderr
    assert failed.stdout.splitlines() == [
        "packages/a2c-server/src/a2c_server/_mod.py:1: import of python-engineio internal module"
        " engineio.async_socket (move it into packages/a2c-server/src/a2c_server/_upstream.py)"
    ]
    listed = subprocess.run(
        [*run, "--list"], capture_output=True, text=True, timeout=120, check=False
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "packages/a2c-server/src/a2c_server/_upstream.py:1: import of python-engineio internal"
        " module engineio.payload"
    ]
