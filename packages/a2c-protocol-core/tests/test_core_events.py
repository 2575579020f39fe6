"""The event registry is complete, and no event name is spelled outside it."""

import re
from pathlib import Path

import attrs

from a2c_protocol import (
    CLIENT_EVENTS,
    EVENTS,
    NAMESPACE,
    PROTOCOL_VERSION,
    UPDATE_EVENTS,
    Event,
    EventKind,
    GetBlobReq,
    GetBlobRet,
    GetSkillReq,
    GetSkillRet,
    GetSkillsReq,
    GetSkillsRet,
    ProtocolVersion,
    PutBlobReq,
    PutBlobRet,
    Role,
)

ROOT = Path(__file__).resolve().parents[3]


def test_namespace() -> None:
    assert NAMESPACE == "/smcp"


def test_every_event_has_a_spec_with_models() -> None:
    assert set(EVENTS) == set(Event)
    assert len(Event) == 24
    for event, spec in EVENTS.items():
        assert spec.event is event
        assert spec.kind.value == event.value.split(":")[0]
        assert attrs.has(spec.request)
        if spec.kind is EventKind.NOTIFY:
            assert not spec.senders and spec.response is None
        else:
            assert spec.senders


def test_client_events_are_agent_only_and_answered() -> None:
    assert [e.value for e in CLIENT_EVENTS] == [
        "client:tool_call", "client:get_config", "client:get_tools",
        "client:get_desktop", "client:get_resources",
        "client:get_skills", "client:get_skill", "client:get_blob", "client:put_blob",
    ]  # fmt: skip
    for event in CLIENT_EVENTS:
        assert EVENTS[event].senders == {Role.AGENT}
        assert EVENTS[event].response is not None


def test_server_events_name_their_broadcast() -> None:
    assert EVENTS[Event.UPDATE_DESKTOP].notifies is Event.NOTIFY_UPDATE_DESKTOP
    assert EVENTS[Event.TOOL_CALL_CANCEL].notifies is Event.NOTIFY_TOOL_CALL_CANCEL
    assert EVENTS[Event.LIST_ROOM].notifies is None
    assert EVENTS[Event.UPDATE_SKILLS].notifies is Event.NOTIFY_UPDATE_SKILLS


def test_the_0_2_1_events_are_catalogued_with_their_models() -> None:
    assert {e.value for e in Event if EVENTS[e].since == "0.2.1"} == {
        "client:get_skills", "client:get_skill", "client:get_blob",
        "server:update_skills", "notify:update_skills",
    }  # fmt: skip
    assert EVENTS[Event.GET_SKILLS].request is GetSkillsReq
    assert EVENTS[Event.GET_SKILLS].response is GetSkillsRet
    assert EVENTS[Event.GET_SKILL].request is GetSkillReq
    assert EVENTS[Event.GET_SKILL].response is GetSkillRet
    assert EVENTS[Event.GET_BLOB].request is GetBlobReq
    assert EVENTS[Event.GET_BLOB].response is GetBlobRet
    assert EVENTS[Event.UPDATE_SKILLS].senders == {Role.COMPUTER}
    assert EVENTS[Event.UPDATE_SKILLS].response is None
    for event in Event:
        if event is not Event.PUT_BLOB:  # 0.4's, an extension in 0.2 (test below)
            assert ProtocolVersion.parse(EVENTS[event].since) <= ProtocolVersion.parse(
                PROTOCOL_VERSION
            )


def test_put_blob_is_catalogued_as_0_4s_upload() -> None:
    spec = EVENTS[Event.PUT_BLOB]
    assert (spec.request, spec.response) == (PutBlobReq, PutBlobRet)
    assert spec.since == "0.4.0" and spec.senders == {Role.AGENT}
    assert spec.added_in_patch  # a 0.2.0 peer does not know it


def test_update_events_are_the_computer_change_reports() -> None:
    assert [e.value for e in UPDATE_EVENTS] == [
        "server:update_config", "server:update_tool_list", "server:update_desktop",
        "server:update_skills",
    ]  # fmt: skip


def test_no_event_name_literal_outside_the_registry() -> None:
    pattern = re.compile(r"""["'](?:client|server|notify):[a-z_]+["']""")
    offenders = []
    sources = list(ROOT.glob("packages/*/src/**/*.py")) + list(ROOT.glob("tools/*/src/**/*.py"))
    assert sources
    for path in sources:
        if path.name == "_events.py" and "a2c_protocol" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "use a2c_protocol.Event members instead:\n" + "\n".join(offenders)


def test_events_a_patch_added_are_the_ones_a_0_2_0_peer_may_not_know() -> None:
    added = {e.value for e in Event if EVENTS[e].added_in_patch}
    assert added == {e.value for e in Event if EVENTS[e].since != "0.2.0"}
    assert "client:get_skills" in added and "client:get_tools" not in added
