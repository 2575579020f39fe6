"""Version parsing and the compatibility matrix (handshake-and-versioning.md §6-§7)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2c_protocol import (
    PROTOCOL_VERSION,
    InvalidVersionError,
    ProtocolVersion,
    is_compatible,
    supported_range,
)


def test_protocol_version_constant_is_0_2_3() -> None:
    assert PROTOCOL_VERSION == "0.2.3"
    assert str(ProtocolVersion.parse(PROTOCOL_VERSION)) == "0.2.3"


@pytest.mark.parametrize(
    ("client", "server", "compatible"),
    [
        ("0.2.0", "0.2.0", True),  # exact match
        ("0.2.1", "0.2.0", True),  # PATCH differs
        ("0.2.0", "0.2.7", True),
        ("0.2.0", "0.3.0", False),  # MINOR differs (0.x)
        ("0.3.0", "0.2.0", False),  # MINOR differs, reversed
        ("1.0.0", "0.2.0", False),  # MAJOR differs
        ("1.0.0", "1.2.0", True),  # 1.x backward compatible
        ("1.2.0", "1.0.0", False),  # 1.x client newer than server
        ("1.2.5", "1.2.0", True),
        ("2.0.0", "1.9.0", False),
    ],
)
def test_version_matrix(client: str, server: str, compatible: bool) -> None:
    assert is_compatible(client, server) is compatible
    assert is_compatible(ProtocolVersion.parse(client), ProtocolVersion.parse(server)) is compatible


@pytest.mark.parametrize(
    "text",
    [
        "abc",
        "0.2",
        "0.2.0-rc1",
        " 0.2.0",
        "0.2.0 ",
        "+0.2.0",
        "-1.2.3",
        "0.2.x",
        "",
        "0..2",
        "٠.٢.٠",
        "0.2.0.1",
    ],
)
def test_malformed_versions_are_rejected(text: str) -> None:
    with pytest.raises(InvalidVersionError):
        ProtocolVersion.parse(text)


def test_parse_normalizes_leading_zeros_and_orders() -> None:
    assert str(ProtocolVersion.parse("0.02.010")) == "0.2.10"
    assert (
        ProtocolVersion.parse("0.2.9")
        < ProtocolVersion.parse("0.2.10")
        < ProtocolVersion.parse("1.0.0")
    )


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("0.2.0", ("0.2.0", "0.2.999")),
        ("0.2.5", ("0.2.0", "0.2.999")),
        ("1.3.2", ("1.0.0", "1.3.999")),
    ],
)
def test_supported_range(server: str, expected: tuple[str, str]) -> None:
    assert supported_range(server) == expected


versions = st.builds(ProtocolVersion, st.integers(0, 3), st.integers(0, 5), st.integers(0, 20))


@given(versions)
def test_supported_range_bounds_are_compatible(server: ProtocolVersion) -> None:
    low, high = supported_range(server)
    assert is_compatible(low, server)
    assert is_compatible(high, server)


@given(versions, versions)
def test_compatibility_is_decided_by_major_minor_only(
    c: ProtocolVersion, s: ProtocolVersion
) -> None:
    expected = c.major == s.major and (c.minor == s.minor if c.major == 0 else c.minor <= s.minor)
    assert is_compatible(c, s) is expected
    bumped = ProtocolVersion(c.major, c.minor, c.patch + 7)
    assert is_compatible(bumped, s) is expected
