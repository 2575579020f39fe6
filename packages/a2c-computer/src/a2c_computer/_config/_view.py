"""What ``client:get_config`` shows an Agent: the config as written, minus secret values.

Rules (spec delta 0.2.3: ``client:get_config`` MUST NOT show secrets, API keys, OAuth
tokens, real environment values or credential-file contents; input definitions may appear,
resolved values must not):

* ``${input:…}`` placeholders stay as written: they name an input, not its value, and the
  Computer never resolves them for this answer;
* an ``env`` or ``headers`` value with no placeholder in it is replaced by
  :data:`~a2c_protocol.REDACTED`: those are where credentials are written, and a literal
  one cannot be told from a harmless one;
* ``args``, ``url`` and ``cwd`` go through the Computer's text redaction (``token=…``
  pairs, bearer and basic credentials, JWTs, long secrets), a URL's password is masked,
  and a URL's query keeps its keys with every value masked (``?token=[redacted]``: the
  reader sees that a token is passed, not which), its fragment is masked whole;
* a password input's ``default`` is masked, and so is a secret-like key of an OAuth
  ``auth.client_metadata`` (never a token: those are not in the config);
* next to the config, ``a2c_server_states`` (our extension, ignored by other peers) gives
  each server's status, tool count, the MCP protocol version its session speaks (when
  ready) and, when it is not ready, its last error with the same masking: ``config`` views
  show ``failed: <reason>``, not ``no tools``.

Pure: a JSON document in, a new one out.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, Final, Protocol
from urllib.parse import urlsplit, urlunsplit

from a2c_computer._auth import redact_text
from a2c_computer._observe._logging import SECRETS
from a2c_protocol import REDACTED

from ._inputs import placeholder_ids

__all__ = ["agent_view", "safe_error", "states_view"]

_MASKED_MAPS: Final = ("env", "headers")
_TEXT: Final = ("url", "cwd")
#: A URL's query and fragment (the part the text redaction would drop whole).
_URL_TAIL: Final = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s?#]*)([?#][^\s]*)")
_SLOT: Final = "\x00{}\x00"
_SECRET_KEY: Final = re.compile(r"(?i)secret|token|assertion|password|key")


def agent_view(config: dict[str, Any]) -> dict[str, Any]:
    """The wire form of a ``GetComputerConfigRet`` with its secret values masked."""
    view = copy.deepcopy(config)
    for server in (view.get("servers") or {}).values():
        params = server.get("server_parameters") if isinstance(server, dict) else None
        if isinstance(params, dict):
            _mask_params(params)
        if isinstance(server, dict) and isinstance(server.get("auth"), dict):
            _mask_auth(server["auth"])
    for item in view.get("inputs") or ():
        if isinstance(item, dict) and item.get("password") and item.get("default") is not None:
            item["default"] = REDACTED
    return view


class _State(Protocol):
    @property
    def status(self) -> str: ...
    @property
    def last_error(self) -> str | None: ...
    @property
    def tools(self) -> int: ...
    @property
    def protocol(self) -> str | None: ...


def safe_error(text: str | None) -> str | None:
    """An MCP server's error as an Agent may see it (resolved secrets and credentials out)."""
    return None if text is None else redact_text(SECRETS.redact(text))


def states_view(states: Mapping[str, _State]) -> dict[str, Any]:
    """``a2c_server_states``: name → ``{status, tools, protocol, error}`` (the MCP protocol
    version only when ready, the error only when not)."""
    out: dict[str, Any] = {}
    for name, state in states.items():
        entry: dict[str, Any] = {"status": state.status, "tools": state.tools}
        if state.status == "ready" and state.protocol:
            entry["protocol"] = state.protocol
        if state.status != "ready" and state.last_error:
            entry["error"] = safe_error(state.last_error)
        out[name] = entry
    return out


def _mask_params(params: dict[str, Any]) -> None:
    for key in _MASKED_MAPS:
        values = params.get(key)
        if isinstance(values, dict):
            params[key] = {name: _unless_placeholder(value) for name, value in values.items()}
    if isinstance(params.get("args"), list):
        params["args"] = [_text(arg) for arg in params["args"]]
    for key in _TEXT:
        if isinstance(params.get(key), str):
            params[key] = _text(params[key])


def _mask_auth(auth: dict[str, Any]) -> None:
    """An OAuth block's ``client_metadata`` may carry a client secret or assertion."""
    metadata = auth.get("client_metadata")
    if isinstance(metadata, dict):
        auth["client_metadata"] = {
            key: REDACTED if _SECRET_KEY.search(str(key)) else value
            for key, value in metadata.items()
        }


def _unless_placeholder(value: Any) -> Any:
    return value if placeholder_ids(value) else REDACTED


def _text(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    tails: list[str] = []

    def park(match: re.Match[str]) -> str:
        tails.append(_masked_tail(match.group(2)))
        return match.group(1) + _SLOT.format(len(tails) - 1)

    # The masked queries are parked in slots the text redaction leaves alone.
    text = redact_text(_URL_TAIL.sub(park, _without_password(value)))
    for index, tail in enumerate(tails):
        text = text.replace(_SLOT.format(index), tail)
    return text


def _masked_tail(tail: str) -> str:
    """``?a=1&b=2#frag`` → ``?a=[redacted]&b=[redacted]#[redacted]``."""
    query, hash_mark, _fragment = tail.partition("#")
    if query.startswith("?"):
        pairs = [
            (f"{part.partition('=')[0]}={REDACTED}" if "=" in part else REDACTED) if part else ""
            for part in query[1:].split("&")
        ]
        query = "?" + "&".join(pairs)
    return query + (f"#{REDACTED}" if hash_mark else "")


def _without_password(text: str) -> str:
    if "://" not in text or "@" not in text:
        return text
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    if parts.password is None:
        return text
    host = parts.netloc.rpartition("@")[2]  # as written: brackets and port kept
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:{REDACTED}@{host}"))
