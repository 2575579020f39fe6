"""The landing-name cleaner and the free-name candidates: pure functions, table and
property tests."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_computer._landing import sanitize
from a2c_computer._landing._names import NUMBERED_TRIES, candidates

SAFE = re.compile(r"[A-Za-z0-9._-]{1,100}")
DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)),
           *(f"LPT{i}" for i in range(10))}  # fmt: skip


@pytest.mark.parametrize(
    ("hint", "name"),
    [
        ("../../etc/passwd", "passwd"),
        ("..", "upload"),
        (None, "upload"),
        ("", "upload"),
        (".bashrc", "bashrc"),
        ("-rf", "rf"),
        ("a b$c.txt", "a_b_c.txt"),
        ("C:\\Users\\x\\report.pdf", "report.pdf"),
        # Windows device names, any case, alone or before a dot.
        ("CON", "CON_"),
        ("con", "con_"),
        ("nul.txt", "nul_.txt"),
        ("Com1.tar.gz", "Com1_.tar.gz"),
        ("LPT9", "LPT9_"),
        ("aux.", "aux_"),
        ("dir/PRN.log", "PRN_.log"),
        # Not device names: more before the dot, or another word.
        ("CONSOLE.txt", "CONSOLE.txt"),
        ("COM10", "COM10"),
        ("my-nul.txt", "my-nul.txt"),
        ("nul_.txt", "nul_.txt"),
        # Trailing dots and spaces (spaces are never kept anyway).
        ("report.", "report"),
        ("report...", "report"),
        ("report. . ", "report._._"),
        ("...", "upload"),
        ("a" * 150 + ".tar", "a" * 96 + ".tar"),
        ("CON." + "x" * 200, "CON_." + "x" * 95),
        ("CON" + "." * 200, "CON_"),
    ],
)
def test_sanitize_table(hint: str | None, name: str) -> None:
    assert sanitize(hint) == name


def _is_device(name: str) -> bool:
    return name.split(".", 1)[0].upper() in DEVICES


@given(st.one_of(st.none(), st.text(max_size=300)))
def test_sanitized_names_are_safe_everywhere(hint: str | None) -> None:
    name = sanitize(hint)
    assert SAFE.fullmatch(name)
    assert not name.startswith((".", "-")) and not name.endswith(".")
    assert not _is_device(name)
    assert sanitize(name) == name  # a clean name stays as it is


@given(st.sampled_from(sorted(DEVICES)), st.text("abcXYZ.", max_size=8), st.booleans())
def test_no_device_name_gets_through(device: str, rest: str, lower: bool) -> None:
    name = sanitize((device.lower() if lower else device) + rest)
    assert not _is_device(name)


def test_candidates_are_bounded_numbers_then_random() -> None:
    tokens = iter(["aaaa0000", "bbbb1111"])
    names = list(itertools.islice(candidates("f.tar.gz", 5, token=lambda: next(tokens)),
                                  NUMBERED_TRIES + 3))  # fmt: skip
    assert names[0] == "f.tar.gz"
    assert names[1 : NUMBERED_TRIES + 1] == [f"f.tar-{n}.gz" for n in range(5, 5 + NUMBERED_TRIES)]
    assert names[NUMBERED_TRIES + 1 :] == ["f.tar-aaaa0000.gz", "f.tar-bbbb1111.gz"]
    assert list(itertools.islice(candidates("noext"), 2)) == ["noext", "noext-2"]


@given(st.text(max_size=120))
def test_every_candidate_is_a_clean_name(hint: str) -> None:
    for name in itertools.islice(candidates(sanitize(hint)), NUMBERED_TRIES + 2):
        assert re.fullmatch(r"[A-Za-z0-9._-]+", name) and not _is_device(name)
