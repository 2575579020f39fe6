"""``${input:<id>}`` placeholders and input resolution (computer-config.md §6-§7).

Rules:

* placeholders are resolved only inside ``server_parameters``, only in strings: ``command``,
  ``args`` items, ``env`` values, ``cwd``, ``url``, ``headers`` values;
* a whole-value placeholder is replaced by the resolved value (which may be a non-string);
  an embedded one is spliced in as text;
* an unknown ``<id>`` leaves the text unchanged and logs a WARN;
* resolution order for one input: environment variable (most specific name first:
  ``PREFIX+ID_SERVER_TOOL``, ``PREFIX+ID_SERVER``, ``PREFIX+ID``, all upper-cased), then for a
  ``command`` input its trimmed stdout, otherwise an interactive prompt when a terminal is
  attached, then the input's ``default``; if none gives a value, an
  :class:`InputResolutionError` names the environment variable to set;
* a ``pickString`` value must be one of ``options``;
* values are cached per id for the session; every resolved string value is registered
  with the log redaction (any input may carry a credential, e.g. in a URL);
* resolution happens on the Computer only: the authored config keeps its placeholders.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import re
import shlex
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

from a2c_computer._exceptions import InputResolutionError
from a2c_computer._observe._logging import register_secret
from a2c_protocol import CommandInput, MCPServerInput, PickStringInput, PromptStringInput

__all__ = [
    "DEFAULT_ENV_PREFIX",
    "InputResolver",
    "PromptFn",
    "env_var_names",
    "placeholder_ids",
    "substitute",
]

logger = logging.getLogger("a2c_computer.inputs")

DEFAULT_ENV_PREFIX: Final = "A2C_SMCP_"
_PLACEHOLDER: Final = re.compile(r"\$\{input:([^}]+)\}")

#: ``prompt(input) -> value or None`` (None = the user cancelled); may block (run in a thread).
PromptFn = Callable[[MCPServerInput], Awaitable[str | None]]


def env_var_names(
    input_id: str,
    *,
    server: str | None = None,
    tool: str | None = None,
    prefix: str = DEFAULT_ENV_PREFIX,
) -> list[str]:
    """Candidate environment variable names, most specific first."""
    base = f"{prefix}{input_id}".upper()
    names: list[str] = []
    if server and tool:
        names.append(f"{base}_{server}_{tool}".upper())
    if server:
        names.append(f"{base}_{server}".upper())
    names.append(base)
    return names


def placeholder_ids(value: object) -> set[str]:
    """Every input id referenced in the strings of ``value`` (recursively)."""
    found: set[str] = set()
    if isinstance(value, str):
        found.update(m.group(1) for m in _PLACEHOLDER.finditer(value))
    elif isinstance(value, Mapping):
        for item in value.values():
            found |= placeholder_ids(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found |= placeholder_ids(item)
    return found


def substitute(value: Any, values: Mapping[str, Any]) -> Any:
    """``value`` with every placeholder whose id is in ``values`` replaced.

    Ids missing from ``values`` stay as written (with a WARN).
    """
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole is not None:
            key = whole.group(1)
            if key in values:
                return values[key]
            logger.warning("placeholder ${input:%s} refers to no known input; left unchanged", key)
            return value

        def splice(match: re.Match[str]) -> str:
            key = match.group(1)
            if key in values:
                resolved = values[key]
                if isinstance(resolved, bool):
                    return "true" if resolved else "false"
                return str(resolved)
            logger.warning("placeholder ${input:%s} refers to no known input; left unchanged", key)
            return match.group(0)

        return _PLACEHOLDER.sub(splice, value)
    if isinstance(value, Mapping):
        return {k: substitute(v, values) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [substitute(v, values) for v in value]
    return value


async def _terminal_prompt(item: MCPServerInput) -> str | None:
    def ask() -> str | None:
        try:
            if isinstance(item, PromptStringInput):
                label = f"{item.description} [{item.id}]"
                if item.default is not None and not item.password:
                    label += f" (default {item.default})"
                label += ": "
                answer = getpass.getpass(label) if item.password else input(label)
            elif isinstance(item, PickStringInput):
                print(f"{item.description} [{item.id}]", file=sys.stderr)
                for n, option in enumerate(item.options, 1):
                    print(f"  {n}. {option}", file=sys.stderr)
                answer = input("choice (number or value): ").strip()
                if answer.isdigit() and 1 <= int(answer) <= len(item.options):
                    answer = item.options[int(answer) - 1]
            else:
                return None
        except (EOFError, KeyboardInterrupt):
            return None
        return answer or None

    return await asyncio.to_thread(ask)


class InputResolver:
    """Resolves input values for MCP server parameters, with a per-id cache."""

    def __init__(
        self,
        inputs: Sequence[MCPServerInput] | None,
        *,
        env: Mapping[str, str] | None = None,
        prefix: str = DEFAULT_ENV_PREFIX,
        prompt: PromptFn | None = None,
        interactive: bool | None = None,
    ) -> None:
        import os

        self._inputs = {item.id: item for item in inputs or []}
        self._env = env if env is not None else os.environ
        self._prefix = prefix
        self._prompt = prompt or _terminal_prompt
        self._interactive = sys.stdin.isatty() if interactive is None else interactive
        self._cache: dict[str, Any] = {}
        self._lock = asyncio.Lock()

    def update_inputs(self, inputs: Sequence[MCPServerInput] | None) -> None:
        """Replace the definitions; cached values of changed or removed ids are dropped."""
        new = {item.id: item for item in inputs or []}
        for key in list(self._cache):
            if new.get(key) != self._inputs.get(key):
                del self._cache[key]
        self._inputs = new

    def clear_cache(self, input_id: str | None = None) -> None:
        """Forget one cached value, or all of them."""
        if input_id is None:
            self._cache.clear()
        else:
            self._cache.pop(input_id, None)

    async def resolve_params(self, params: Mapping[str, Any], *, server: str) -> dict[str, Any]:
        """``params`` (a server_parameters JSON object) with placeholders resolved."""
        values: dict[str, Any] = {}
        for key in sorted(placeholder_ids(params)):
            if key in self._inputs:
                values[key] = await self.resolve(key, server=server)
        resolved: dict[str, Any] = substitute(dict(params), values)
        return resolved

    async def resolve(self, input_id: str, *, server: str | None = None) -> Any:
        """The value of one input (cached after the first success)."""
        async with self._lock:
            if input_id in self._cache:
                return self._cache[input_id]
            item = self._inputs.get(input_id)
            if item is None:
                raise InputResolutionError(f"no input with id {input_id!r}", input_id=input_id)
            value = await self._obtain(item, server)
            if isinstance(item, PickStringInput) and value not in item.options:
                raise InputResolutionError(
                    f"input {input_id!r}: value must be one of {item.options}", input_id=input_id
                )
            self._cache[input_id] = value
            register_secret(value)
            # Any input may carry a credential: the value itself is never logged.
            logger.debug("input %s resolved", input_id)
            return value

    async def _obtain(self, item: MCPServerInput, server: str | None) -> Any:
        names = env_var_names(item.id, server=server, prefix=self._prefix)
        for name in names:
            if name in self._env:
                return self._env[name]
        if isinstance(item, CommandInput):
            return await self._run_command(item)
        if self._interactive:
            answer = await self._prompt(item)
            if answer is not None:
                return answer
        if item.default is not None:
            return item.default
        what = "secret " if isinstance(item, PromptStringInput) and item.password else ""
        raise InputResolutionError(
            f"input {item.id!r} ({item.description}) needs a {what}value: set the environment "
            f"variable {names[-1]} (no terminal to prompt on and no default)",
            input_id=item.id,
        )

    async def _run_command(self, item: CommandInput) -> str:
        command = item.command
        for key, value in (item.args or {}).items():
            command += f" {shlex.quote(key)} {shlex.quote(value)}"
        proc = await asyncio.create_subprocess_shell(
            command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await proc.communicate()
        if proc.returncode != 0:
            raise InputResolutionError(
                f"input {item.id!r}: command exited with status {proc.returncode}: "
                f"{err.decode(errors='replace').strip()[:200]}",
                input_id=item.id,
            )
        return out.decode(errors="replace").strip()
