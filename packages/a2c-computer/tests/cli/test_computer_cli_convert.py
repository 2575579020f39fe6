"""mcpServers files and CLI papercuts: ``config convert``, "did you
mean" in mcpServers entries, the clash fix that fits the file, flags after the command, an
unknown option named as such, no ``ssl:default`` in "cannot connect"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from a2c_computer import ConfigError, load_config

from .test_computer_cli import cli


def mcp_servers_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """Our stdio config entry, written the way other MCP hosts write it."""
    params = entry["server_parameters"]
    return {k: params[k] for k in ("command", "args", "env") if params.get(k) is not None}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_mcp_servers_entries_suggest_the_key_meant() -> None:
    cases = [
        ({"comand": "uvx"}, "('comand': did you mean 'command'?)"),
        ({"command": "uvx", "arg": ["x"]}, "did you mean 'args'?"),
        ({"url": "http://h/mcp", "header": {}}, "did you mean 'headers'?"),
        ({"command": "uvx", "tool_prefix": "t_"}, "a2c-computer config convert"),
    ]
    for entry, expected in cases:
        with pytest.raises(ConfigError) as raised:
            load_config({"mcpServers": {"x": entry}})
        assert expected in str(raised.value), (entry, str(raised.value))


async def test_config_convert_writes_a_file_that_loads(tmp_path: Path) -> None:
    source = write(
        tmp_path / "claude.json",
        {
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"]},
                "remote": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "k"}},
            }
        },
    )
    code, out, err = await cli("config", "convert", str(source))
    assert code == 0, err
    printed = json.loads(out)
    assert printed["servers"]["time"]["server_parameters"]["args"] == ["mcp-server-time"]
    assert printed["servers"]["remote"]["type"] == "streamable"

    target = tmp_path / "computer.json"
    code, out, err = await cli("config", "convert", str(source), "-o", str(target))
    assert (code, out) == (0, ""), err
    assert "wrote 2 server(s)" in err
    config = load_config(target)  # our format now: tool_prefix can be added
    assert set(config.servers) == {"time", "remote"}

    # Nothing is overwritten without --overwrite, no parent is created, and our own
    # format (or a broken entry) is refused with the reason: all exit 2, nothing written.
    target.write_text("mine", encoding="utf-8")
    broken = write(tmp_path / "broken.json", {"mcpServers": {"x": {"comand": "uvx"}}})
    refusals = [
        (("-o", str(target)), str(source), "--overwrite"),
        (("-o", str(tmp_path / "no" / "c.json")), str(source), "does not exist"),
        (("-o", str(tmp_path)), str(source), "is a directory"),
        ((), str(write(tmp_path / "ours.json", printed)), "already in this Computer's format"),
        ((), str(broken), "did you mean 'command'?"),
    ]
    for extra, given, expected in refusals:
        code, out, err = await cli("config", "convert", given, *extra)
        assert (code, out) == (2, ""), (extra, err)
        assert expected in err and "Traceback" not in err, (extra, err)
    assert target.read_text(encoding="utf-8") == "mine"
    assert not (tmp_path / "no").exists()

    code, _, err = await cli("config", "convert", str(source), "-o", str(target), "--overwrite")
    assert code == 0, err
    assert set(load_config(target).servers) == {"time", "remote"}


async def test_check_of_an_mcp_servers_file_says_how_to_add_a_tool_prefix(
    servers: Any, tmp_path: Path
) -> None:
    entries = {n: mcp_servers_entry(servers.desk(n, "--profile", "conformant")) for n in "ab"}
    config = write(tmp_path / "claude.json", {"mcpServers": entries})
    code, out, _ = await cli("check", "--config", str(config))
    assert code == 1, out
    assert 'add "tool_prefix": "b_" to servers.b' in out
    assert f"a2c-computer config convert {config} -o computer.json" in out


async def test_logging_flags_work_after_the_command_and_unknown_options_are_named(
    tmp_path: Path,
) -> None:
    config = write(tmp_path / "c.json", {"mcpServers": {}})
    code, _, err = await cli("check", "--config", str(config), "-v", "--log-format", "json")
    assert code == 0, err
    # -v made the INFO line visible, --log-format json made it JSON.
    records = [json.loads(line) for line in err.splitlines() if line.strip()]
    assert any("converted the mcpServers shape" in r["message"] for r in records), err
    code, _, err = await cli("--bogus")
    assert code == 2 and "unrecognized arguments: --bogus" in err, err
    assert "required: command" not in err
    code, _, err = await cli()
    assert code == 2 and "a command is needed" in err
    code, _, err = await cli("run", "--bogus", "--config", str(config))
    assert code == 2 and "unrecognized arguments: --bogus" in err


async def test_cannot_connect_does_not_say_ssl_default(tmp_path: Path) -> None:
    config = write(tmp_path / "c.json", {"servers": {}})
    code, _, err = await cli(
        "run", "--config", str(config), "--server", "http://127.0.0.1:9", "--office", "o",
        "--name", "box", "--wait-server", "0", "--confirm", "allow",
        "--blob-spool-dir", str(tmp_path / "spool"),
        "--skills-install-dir", str(tmp_path / "staged"), "--no-user-skills",
    )  # fmt: skip
    assert code == 1, err
    assert "cannot connect to http://127.0.0.1:9" in err and "Connect call failed" in err
    assert "ssl:default" not in err
