"""docs/error-codes.md lists every code our processes can produce, with who sends it.

Cross-checked against the core's code table (every ``ErrorCode`` member, plus 4900) and
against the role packages' sources: every ``ErrorCode.NAME`` they use and every literal
``code = NNN`` / ``{"code": NNN`` they send must have a row in the "Who sends each code"
table. A new code without a row fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

from a2c_protocol import WS_CLOSE_VERSION_REJECTED, ErrorCode

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "error-codes.md"
ROLE_SOURCES = [ROOT / "packages" / p / "src" for p in ("a2c-server", "a2c-computer", "a2c-agent")]


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def documented_codes() -> set[int]:
    """Codes in the first column of the rows of the 'Who sends each code' section."""
    codes: set[int] = set()
    for line in _section("Who sends each code").splitlines():
        first = line.split("|")[1] if line.startswith("|") else ""
        codes |= {int(n) for n in re.findall(r"\b\d{3,4}\b", first)}
    return codes


def source_codes() -> dict[int, str]:
    """Codes the role packages produce: ErrorCode members they name, and literal codes."""
    found: dict[int, str] = {}
    literal = re.compile(r"""(?:\bcode\s*=\s*|["']code["']\s*:\s*)(\d{3,4})\b""")
    for root in ROLE_SOURCES:
        for path in root.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for name in re.findall(r"ErrorCode\.([A-Z_]+)", text):
                found.setdefault(int(ErrorCode[name]), f"{path.name}: ErrorCode.{name}")
            for number in literal.findall(text):
                found.setdefault(int(number), f"{path.name}: literal {number}")
    return found


def test_every_core_code_has_a_row() -> None:
    missing = {int(c) for c in ErrorCode} - documented_codes()
    assert not missing, f"ErrorCode members without a row in {DOC.name}: {sorted(missing)}"


def test_every_code_the_sources_produce_has_a_row() -> None:
    documented = documented_codes() | {
        int(WS_CLOSE_VERSION_REJECTED)  # documented in the HTTP/WebSocket table
    }
    http_table = _section("Who sends each code").split("### Below the protocol")[1]
    documented |= {int(n) for n in re.findall(r"(?:HTTP|close) (\d{3,4})", http_table)}
    missing = {code: where for code, where in source_codes().items() if code not in documented}
    assert not missing, f"codes produced but not documented in {DOC.name}: {missing}"


def test_the_server_only_codes_are_there() -> None:
    # Not in the protocol's table, so the core cannot remind us of them.
    codes = documented_codes()
    assert {503, 408, 4008} <= codes
    assert "details.delivered" in DOC.read_text(encoding="utf-8")
