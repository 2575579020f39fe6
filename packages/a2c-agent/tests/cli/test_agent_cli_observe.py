"""The pure parts of ``a2c-agent watch --console``: reading the console's
Server-Sent Events and printing them as ``watch`` prints notifications."""

from __future__ import annotations

import datetime as dt
import json

from a2c_agent._cli._observe import SseReader, event_of, line_of, members_line, refusal_message


def test_sse_reader_returns_each_event_at_its_blank_line() -> None:
    reader = SseReader()
    lines = ["retry: 3000", "", ": keepalive", "", "event: office", 'data: {"a":', "data: 1}",
             "", "data: plain", ""]  # fmt: skip
    got = [done for line in lines if (done := reader.feed(line)) is not None]
    assert got == [("office", '{"a":\n1}'), ("message", "plain")]


def test_events_print_like_watch_notifications() -> None:
    at = 1_700_000_000.25
    when, event, data = event_of("office", {"office": "o", "event": "notify:enter_office",
                                            "at": at, "office_id": "o", "computer": "box"})  # fmt: skip
    assert event == "notify:enter_office" and data == {"office_id": "o", "computer": "box"}
    assert when == dt.datetime.fromtimestamp(at, dt.UTC)
    assert json.loads(line_of(when, event, data, as_table=False)) == {
        "time": "2023-11-14T22:13:20.250+00:00", "event": event, "data": data,
    }  # fmt: skip
    assert line_of(when, event, data, as_table=True).endswith(
        "  notify:enter_office  office_id=o computer=box"
    )
    _, event, data = event_of("call", {"office": "o", "event": "client:tool_call",
                                       "tool": "echo", "computer": "box", "agent": "ag",
                                       "outcome": "tool error", "code": 4001, "started": at,
                                       "ended": at + 1, "duration": 1.0})  # fmt: skip
    assert event == "call" and data["outcome"] == "tool error" and data["code"] == 4001
    assert data["request"] == "client:tool_call" and data["tool"] == "echo"


def test_refusals_and_members_say_what_to_do() -> None:
    url = "http://h/console/events"
    assert "refused the admin token" in refusal_message(401, url, had_token=True, retry_after=None)
    assert "A2C_ADMIN_TOKEN" in refusal_message(401, url, had_token=False, retry_after=None)
    assert "start it with --console" in refusal_message(404, url, had_token=True, retry_after=None)
    assert "for 7 s" in refusal_message(429, url, had_token=True, retry_after="7")
    state = {"members": [{"office": "o", "name": "box", "role": "computer"},
                         {"office": "other", "name": "x", "role": "agent"}]}  # fmt: skip
    assert members_line(state, "o") == "a2c-agent: office 'o' now: box (computer)"
    assert members_line({}, "o") == "a2c-agent: office 'o' now: nobody"
