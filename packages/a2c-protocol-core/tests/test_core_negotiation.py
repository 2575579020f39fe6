"""retry_line: which line a client reconnects with after a 4008."""

from a2c_protocol import ProtocolVersionError, retry_line


def refusal(low: str, high: str, **details: object) -> ProtocolVersionError:
    return ProtocolVersionError("no", server_version=low, client_version="0.2.3",
                                min_supported=low, max_supported=high,
                                details=dict(details) or None)  # fmt: skip


def test_a_0_4_server_gets_0_4_once() -> None:
    assert retry_line(refusal("0.4.0", "0.4.999"), "0.2.3") == "0.4"
    assert retry_line(refusal("0.4.0", "0.4.999"), "0.4.2") is None  # never twice


def test_a_line_we_do_not_speak_is_not_retried() -> None:
    assert retry_line(refusal("0.3.0", "0.3.999"), "0.2.3") is None
    assert retry_line(refusal("0.4.3", "0.4.999"), "0.2.3") is None  # 0.4.2 is below it
    assert retry_line(refusal("", ""), "0.2.3") is None


def test_our_servers_extra_ranges_count() -> None:
    ranges = [{"min_supported": "0.3.0", "max_supported": "0.3.9"},
              {"min_supported": "0.4.0", "max_supported": "0.4.999"}]  # fmt: skip
    assert retry_line(refusal("0.3.0", "0.3.9", a2c_supported_ranges=ranges), "0.2.3") == "0.4"
