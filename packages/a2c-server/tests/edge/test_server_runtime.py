"""The fast loop and parser are installed with the Server, and the start line names them."""

from __future__ import annotations

import sys

import pytest

from a2c_server._runtime import RuntimeStack, runtime_stack


@pytest.mark.skipif(
    sys.platform == "win32" or sys.implementation.name != "cpython",
    reason="uvloop/httptools are only required where wheels exist",
)
def test_server_depends_on_the_fast_stack_where_wheels_exist() -> None:
    stack = runtime_stack()
    assert stack == RuntimeStack(loop="uvloop", http="httptools")
    assert stack.fast
    assert stack.describe() == "uvloop + httptools"


def test_server_runtime_fallback_says_what_to_install() -> None:
    slow = RuntimeStack(loop="asyncio", http="h11")
    assert not slow.fast
    assert slow.describe() == "asyncio + h11 (install uvloop and httptools for speed)"
