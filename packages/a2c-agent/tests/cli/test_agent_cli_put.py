"""``a2c-agent put`` with a FILE it cannot upload: one line saying why, exit 2, no usage
block, nothing connected."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from a2c_agent._cli._main import main

# Port 9 (discard): nothing answers there, so a connect attempt would fail differently.
BASE = ["--server", "http://127.0.0.1:9", "--office", "o", "put", "box"]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda d: d / "nonexistent", "does not exist"),
        (lambda d: d, "is a directory"),
        (lambda d: (d / "empty").touch() or d / "empty", "is empty"),
    ],
)
def test_a_file_that_cannot_be_uploaded_is_one_line(
    make, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make(tmp_path)
    assert main([*BASE, str(path)], stdout=io.StringIO(), environ={}) == 2
    err = capsys.readouterr().err
    assert err == f"a2c-agent: error: put: {path} {expected}" + err.split(expected, 1)[1]
    assert len(err.strip().splitlines()) == 1 and "usage:" not in err


@pytest.mark.skipif(sys.platform == "win32" or not os.path.exists("/dev/null"), reason="POSIX")
def test_a_device_is_not_a_regular_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "/dev/null"], stdout=io.StringIO(), environ={}) == 2
    assert capsys.readouterr().err == "a2c-agent: error: put: /dev/null is not a regular file\n"
