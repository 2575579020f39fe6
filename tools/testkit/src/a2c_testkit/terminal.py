"""A program on a real pseudo-terminal, driven as a user at a keyboard would drive it.

``Terminal.spawn(argv)`` starts the program with its stdin and stderr on the slave side of a
new pty (so ``isatty()`` is true there) and its stdout on a pipe (what a script reads);
:meth:`Terminal.expect` reads the screen until a text appears, :meth:`Terminal.type` types
a line. Loopback-only tests use it to answer prompts (``a2c-agent call`` asking a form).
:func:`run_agent_cli` runs ``a2c-agent`` with no terminal at all (stdin is /dev/null).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Sequence

__all__ = ["Terminal", "run_agent_cli"]


class Terminal:
    """The master side of a pseudo-terminal and the program on its slave side."""

    def __init__(self, process: subprocess.Popen[bytes], fd: int) -> None:
        self.process = process
        self.fd = fd
        #: What the program wrote that no :meth:`expect` consumed yet.
        self.seen = ""

    @classmethod
    def spawn(cls, argv: Sequence[str], env: dict[str, str] | None = None) -> Terminal:
        master, slave = pty.openpty()
        process = subprocess.Popen(
            list(argv), stdin=slave, stderr=slave, stdout=subprocess.PIPE, env=env
        )
        os.close(slave)
        return cls(process, master)

    def expect(self, text: str, timeout: float = 60.0) -> str:
        """Everything up to and including ``text`` (AssertionError if it never comes)."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.seen}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the program closed its side
                    chunk = b""
                if not chunk:
                    raise AssertionError(
                        f"{text!r} never appeared; the terminal closed:\n{self.seen}"
                    )
                self.seen += chunk.decode(errors="replace")
        shown, _, self.seen = self.seen.partition(text)
        return shown + text

    def type(self, line: str) -> None:
        """Type ``line`` and Enter."""
        os.write(self.fd, line.encode() + b"\r")

    def drain(self, timeout: float = 0.5) -> str:
        """What the program still writes within ``timeout`` seconds (nothing is waited for)."""
        with contextlib.suppress(AssertionError):
            self.expect("\x00never\x00", timeout)
        return self.seen

    def finish(self, timeout: float = 60.0) -> tuple[int, str]:
        """Wait for the program: its exit code and its stdout."""
        try:
            out, _ = self.process.communicate(timeout=timeout)
        finally:
            self.close()
        return self.process.returncode, out.decode()

    def close(self) -> None:
        """Stop the program if it still runs, and release the terminal."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        with contextlib.suppress(OSError):
            os.close(self.fd)


async def run_agent_cli(url: str, office: str, *args: str) -> tuple[int, str, str]:
    """``a2c-agent --server URL --office OFFICE ARGS...`` without a terminal: its exit code,
    stdout and stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_agent", "--server", url, "--office", office, *args,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()
