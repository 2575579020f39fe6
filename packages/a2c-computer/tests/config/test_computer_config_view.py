"""What client:get_config shows: the config as written, secret values masked (pure)."""

from __future__ import annotations

from typing import Any

from a2c_computer._config import agent_view


def _config(**params: Any) -> dict[str, Any]:
    return {"servers": {"s": {"name": "s", "type": "stdio", "server_parameters": params}}}


def _params(view: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = view["servers"]["s"]["server_parameters"]
    return params


def test_literal_env_and_header_values_are_masked_placeholders_are_not() -> None:
    config = _config(
        command="srv",
        env={"TOKEN": "${input:token}", "KEY": "sk-live-1", "LEVEL": "debug"},
        headers={"Authorization": "Bearer ${input:token}", "X-Api-Key": "abc123"},
    )
    view = _params(agent_view(config))
    assert view["env"] == {"TOKEN": "${input:token}", "KEY": "[redacted]", "LEVEL": "[redacted]"}
    assert view["headers"] == {"Authorization": "Bearer ${input:token}", "X-Api-Key": "[redacted]"}
    assert config["servers"]["s"]["server_parameters"]["env"]["KEY"] == "sk-live-1"  # a copy


def test_args_and_urls_lose_their_credentials() -> None:
    view = _params(
        agent_view(
            _config(
                command="srv",
                args=["--api-key=hunter2-hunter2", "--verbose", "--token", "plain"],
                url="https://bob:pa55word@example.org:8443/mcp?key=q-secret",
                cwd="/srv/app",
            )
        )
    )
    assert view["args"][0] == "--api-key=[redacted]" and view["args"][1] == "--verbose"
    assert "pa55word" not in view["url"] and "q-secret" not in view["url"]
    assert view["url"].startswith("https://bob:[redacted]@example.org:8443/mcp")
    assert view["cwd"] == "/srv/app"


def test_a_url_query_keeps_its_keys_with_values_masked() -> None:
    view = _params(
        agent_view(
            _config(
                url="https://example.org/mcp?token=t0k3n&region=eu#frag",
                args=["--endpoint", "http://h:1/sse?key=abc&flag", "x?y=1"],
            )
        )
    )
    assert view["url"] == "https://example.org/mcp?token=[redacted]&region=[redacted]#[redacted]"
    assert view["args"] == ["--endpoint", "http://h:1/sse?key=[redacted]&[redacted]", "x?y=1"]


def test_an_ipv6_host_keeps_its_brackets() -> None:
    view = _params(agent_view(_config(url="http://u:secret@[::1]:9000/mcp")))
    assert view["url"] == "http://u:[redacted]@[::1]:9000/mcp"


def test_a_password_inputs_default_is_masked_other_defaults_stay() -> None:
    view = agent_view(
        {
            "servers": {},
            "inputs": [
                {"id": "t", "type": "promptString", "description": "", "password": True,
                 "default": "s3cret"},
                {"id": "r", "type": "pickString", "description": "", "options": ["eu", "us"],
                 "default": "eu"},
            ],
        }
    )  # fmt: skip
    assert [item["default"] for item in view["inputs"]] == ["[redacted]", "eu"]
