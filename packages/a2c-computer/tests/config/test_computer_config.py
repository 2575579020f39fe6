"""Config validation, placeholders and input resolution (pure and with a real server)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from a2c_computer import (
    ConfigError,
    InputResolutionError,
    InputResolver,
    env_var_names,
    load_config,
)
from a2c_computer._config._inputs import substitute
from a2c_protocol import PickStringInput, PromptStringInput


def base(**servers: Any) -> dict[str, Any]:
    return {"servers": servers}


def stdio(name: str, **fields: Any) -> dict[str, Any]:
    return {"type": "stdio", "name": name, "server_parameters": {"command": "x"}, **fields}


def test_valid_config_gets_defaults() -> None:
    config = load_config(base(s=stdio("s")))
    server = config.servers["s"]
    assert server.disabled is False and server.forbidden_tools == [] and server.tool_meta == {}


def test_all_three_types_load_with_their_parameters() -> None:
    config = load_config(
        base(
            a=stdio(
                "a",
                server_parameters={
                    "command": "c",
                    "args": ["1"],
                    "env": {"K": "V"},
                    "cwd": "/tmp",
                    "encoding": "utf-8",
                    "encoding_error_handler": "replace",
                },
            ),
            b={
                "type": "streamable",
                "name": "b",
                "server_parameters": {
                    "url": "http://x/mcp",
                    "headers": {"A": "b"},
                    "timeout": "PT10S",
                    "sse_read_timeout": "PT1M",
                    "terminate_on_close": False,
                },
            },
            c={
                "type": "sse",
                "name": "c",
                "disabled": True,
                "server_parameters": {
                    "url": "http://x/sse",
                    "timeout": 3,
                    "sse_read_timeout": 30.5,
                },
            },
        )
    )
    assert sorted(config.servers) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (base(s=stdio("s", bogus=1)), "$.servers.s.bogus"),
        (base(s=stdio("other")), "$.servers.s.name"),
        (base(s={"type": "stdio", "name": "s", "server_parameters": {}}), "command"),
        (base(s=stdio("s", forbidden_tools="x")), "forbidden_tools"),
        (
            base(
                s={
                    "type": "streamable",
                    "name": "s",
                    "server_parameters": {"url": "u", "timeout": "30s"},
                }
            ),
            "timeout",
        ),
        (base(s=stdio("s", default_tool_meta={"alias": "x"})), "default_tool_meta.alias"),
        ({"servers": {}, "inputs": [{"id": "a", "type": "nope", "description": "d"}]}, "inputs"),
        ({"servers": {}, "extra": 1}, "$.extra"),
    ],
)
def test_invalid_config_names_the_field(data: dict[str, Any], path: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(data)
    # The core spells map keys either way ($.servers.s / $.servers['s']); normalize.
    message = str(info.value).replace("['", ".").replace("']", "")
    assert path in message
    assert info.value.errors


def test_vrl_syntax_is_checked_at_load_time() -> None:
    assert load_config(base(s=stdio("s", vrl=".x = 1"))).servers["s"].vrl == ".x = 1"
    with pytest.raises(ConfigError, match=r"\$\.servers\[.s.\]\.vrl.*VRL syntax error"):
        load_config(base(s=stdio("s", vrl="if .isError == {")))
    # The spec's own example is fallible VRL (E103): refused before any call is made.
    with pytest.raises(ConfigError, match=r"E103|fallible"):
        load_config(
            base(s=stdio("s", vrl='if .isError == false { .summary = "ok:" + .tool_name }'))
        )


def test_vrl_without_its_runtime_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # The runtime is an optional extra; its absence cannot be installed here, so hide it.
    monkeypatch.setitem(sys.modules, "vrl_python", None)
    with pytest.raises(ConfigError, match=r"a2c-computer\[vrl\]"):
        load_config(base(s=stdio("s", vrl=".x = 1")))


def test_config_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.json")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(base(s=stdio("s"))), encoding="utf-8")
    assert "s" in load_config(str(good)).servers


# -- placeholders ---------------------------------------------------------------------


def test_whole_and_embedded_placeholders(caplog: pytest.LogCaptureFixture) -> None:
    values = {"port": 8080, "user": "ann", "flag": True}
    params = {
        "args": ["${input:port}", "--user=${input:user}"],
        "env": {"P": "${input:port}", "F": "x${input:flag}"},
        "url": "http://h/${input:unknown}",
    }
    with caplog.at_level(logging.WARNING):
        out = substitute(params, values)
    assert out == {
        "args": [8080, "--user=ann"],
        "env": {"P": 8080, "F": "xtrue"},
        "url": "http://h/${input:unknown}",
    }
    assert "unknown" in caplog.text


def test_env_var_names_most_specific_first() -> None:
    assert env_var_names("tracker_token") == ["A2C_SMCP_TRACKER_TOKEN"]
    assert env_var_names("tracker_token", server="issue-tracker") == [
        "A2C_SMCP_TRACKER_TOKEN_ISSUE-TRACKER",
        "A2C_SMCP_TRACKER_TOKEN",
    ]
    assert env_var_names("token", server="my_srv", tool="login")[0] == "A2C_SMCP_TOKEN_MY_SRV_LOGIN"


async def test_resolution_order_env_then_default_and_cache() -> None:
    inputs = [
        PromptStringInput(id="a", description="A", default="dflt"),
        PromptStringInput(id="b", description="B", default="bdef"),
    ]
    env = {"A2C_SMCP_A_SRV": "specific", "A2C_SMCP_A": "bare"}
    resolver = InputResolver(inputs, env=env, interactive=False)
    assert await resolver.resolve("a", server="srv") == "specific"
    assert await resolver.resolve("b") == "bdef"
    env["A2C_SMCP_B"] = "later"
    assert await resolver.resolve("b") == "bdef"  # cached
    resolver.clear_cache("b")
    assert await resolver.resolve("b") == "later"


async def test_prompt_used_when_interactive_and_cancel_falls_back_to_default() -> None:
    asked: list[str] = []

    async def prompt(item: Any) -> str | None:
        asked.append(item.id)
        return None if item.id == "cancel" else "typed"

    inputs = [
        PromptStringInput(id="p", description="P"),
        PromptStringInput(id="cancel", description="C", default="d"),
    ]
    resolver = InputResolver(inputs, env={}, prompt=prompt, interactive=True)
    assert await resolver.resolve("p") == "typed"
    assert await resolver.resolve("cancel") == "d"
    assert asked == ["p", "cancel"]


async def test_missing_secret_is_a_clear_error_naming_the_variable() -> None:
    resolver = InputResolver(
        [PromptStringInput(id="tok", description="Token", password=True)], env={}, interactive=False
    )
    with pytest.raises(InputResolutionError, match="A2C_SMCP_TOK") as info:
        await resolver.resolve("tok")
    assert "secret" in str(info.value)


async def test_pick_string_must_be_an_option() -> None:
    resolver = InputResolver(
        [PickStringInput(id="env", description="E", options=["dev", "prod"])],
        env={"A2C_SMCP_ENV": "staging"},
        interactive=False,
    )
    with pytest.raises(InputResolutionError, match="one of"):
        await resolver.resolve("env")


async def test_command_input_uses_trimmed_stdout() -> None:
    from a2c_protocol import CommandInput

    command = f"{sys.executable} -c \"print('  /repo/root  ')\""
    resolver = InputResolver(
        [CommandInput(id="root", description="R", command=command)], env={}, interactive=False
    )
    assert await resolver.resolve("root") == "/repo/root"
    failing = InputResolver(
        [
            CommandInput(
                id="x", description="X", command=f"{sys.executable} -c 'raise SystemExit(3)'"
            )
        ],
        env={},
        interactive=False,
    )
    with pytest.raises(InputResolutionError, match="status 3"):
        await failing.resolve("x")


async def test_changed_input_definition_drops_its_cached_value() -> None:
    first = [
        PromptStringInput(id="a", description="A", default="one"),
        PromptStringInput(id="b", description="B", default="bee"),
    ]
    resolver = InputResolver(first, env={}, interactive=False)
    assert await resolver.resolve("a") == "one" and await resolver.resolve("b") == "bee"
    resolver.update_inputs(
        [
            PromptStringInput(id="a", description="A", default="two"),
            PromptStringInput(id="b", description="B", default="bee"),
        ]
    )
    assert await resolver.resolve("a") == "two"
    resolver.update_inputs([PromptStringInput(id="a", description="A", default="two")])
    with pytest.raises(InputResolutionError, match="no input"):
        await resolver.resolve("b")


async def test_resolve_params_only_touches_known_placeholders() -> None:
    resolver = InputResolver(
        [PromptStringInput(id="tok", description="T", password=True)],
        env={"A2C_SMCP_TOK_SRV": "v"},
        interactive=False,
    )
    params = {"url": "http://h/${input:tok}", "headers": {"X": "${input:other}"}, "n": 3}
    resolved = await resolver.resolve_params(params, server="srv")
    assert resolved == {"url": "http://h/v", "headers": {"X": "${input:other}"}, "n": 3}


async def test_a_server_whose_secret_is_missing_fails_with_a_clear_status(servers: Any) -> None:
    from a2c_computer import Computer

    entry = servers.desk("desk", "--profile", "conformant")
    entry["server_parameters"]["env"] = {"TOKEN": "${input:tok}"}
    config = {
        "inputs": [{"id": "tok", "type": "promptString", "description": "T", "password": True}],
        "servers": {"desk": entry, "plain": servers.plain()},
    }
    async with Computer(config, name="box", env={}, interactive=False, restart=False) as computer:
        states = computer.server_states()
        assert states["desk"].status == "failed"
        assert "A2C_SMCP_TOK" in str(states["desk"].last_error)
        assert states["plain"].status == "ready"


def test_an_mcp_servers_document_is_converted_as_documented() -> None:
    """The shape other MCP hosts use is converted, not refused with 'unknown key'."""
    from a2c_protocol import SseServerConfig, StdioServerConfig, StreamableServerConfig

    config = load_config(
        {
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                "remote": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Api-Key": "k"}},
                "old": {"type": "sse", "url": "http://127.0.0.1:1/sse", "disabled": True},
            }
        }
    )
    time_server = config.servers["time"]
    assert isinstance(time_server, StdioServerConfig)
    assert time_server.server_parameters.args == ["mcp-server-time"]
    assert time_server.server_parameters.env == {"TZ": "UTC"}
    assert time_server.default_tool_meta is None  # nothing invented: confirmation stays on
    assert isinstance(config.servers["remote"], StreamableServerConfig)
    old = config.servers["old"]
    assert isinstance(old, SseServerConfig) and old.disabled


def test_an_mcp_servers_entry_with_keys_we_cannot_convert_names_them() -> None:
    with pytest.raises(ConfigError) as raised:
        load_config({"mcpServers": {"x": {"command": "c", "autoApprove": ["a"]}, "y": {}}})
    text = str(raised.value)
    assert "mcpServers shape" in text and "$.mcpServers['x'].autoApprove" in text
    assert "needs 'command'" in text


def test_unknown_keys_suggest_the_nearest_name() -> None:
    entry = {"type": "stdio", "name": "s", "server_parameters": {"command": "x"}}
    with pytest.raises(ConfigError) as raised:
        load_config({"servers": {"s": {**entry, "forbiden_tools": []}}})
    assert "did you mean 'forbidden_tools'?" in str(raised.value)
    with pytest.raises(ConfigError) as both:
        load_config({"servers": {"s": entry}, "mcpServers": {}})
    assert "move its entries into 'servers'" in str(both.value)
