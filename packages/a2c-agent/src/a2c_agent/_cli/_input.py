"""``a2c-agent call``: answering a tool's requests for input, on a terminal or from flags.

When the tool's MCP server asks (docs/agent.md, *Tools that ask*), each request is answered,
in this order of preference:

1. from the command line: ``--answer`` values answer elicitations in the order asked
   (``accept``, ``decline``, ``cancel``, or a JSON object: the form's content, accepted;
   ``{"action": ..., "content": ...}`` is taken as the whole answer), ``--sample`` values
   answer sampling requests (plain text: the model's reply; a JSON object: MCP's
   ``CreateMessageResult`` as is);
2. on a terminal (stdin is one, and no ``--no-prompt``): a prompt on stderr, field by field
   from the form's schema (defaults offered, answers checked), then a review to send, edit,
   decline or cancel; a URL is printed with its host, never opened; a sampling request shows
   the messages and takes a typed reply (an empty line declines);
3. otherwise no: an elicitation is declined, a sampling refused.

A form that asks for a secret is declined without asking (MCP forbids secrets in forms).
Every exchange is kept for ``--json`` (the result gets ``input_requests``) and said on
stderr in one line when not prompted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import threading
from collections.abc import Callable
from typing import Any, TextIO, TypeVar
from urllib.parse import urlsplit

from a2c_protocol import (
    ElicitationRequest,
    ElicitationResponse,
    InputRefusal,
    InputRequest,
    InputResponse,
    SamplingRequest,
    SamplingResponse,
)
from a2c_protocol._input import (
    FormField,
    content_problems,
    form_fields,
    parse_field,
    response_to_wire,
    secret_fields,
)

__all__ = ["CliInput", "add_input_args", "read_input_args"]

_WORDS = ("accept", "decline", "cancel")
#: The ``model`` a typed or ``--sample`` text reply claims to come from.
CLI_MODEL = "a2c-agent-cli"


def add_input_args(call: argparse.ArgumentParser) -> None:
    """The ``call`` command's input flags."""
    call.add_argument(
        "--answer", action="append", default=[], metavar="VALUE",
        help="answer the tool's next form or URL request: accept, decline, cancel, or a JSON "
        "object with the form's content (repeat for several, in the order asked)",
    )  # fmt: skip
    call.add_argument(
        "--sample", action="append", default=[], metavar="TEXT",
        help="answer the tool's next sampling request with this reply (or a JSON "
        "CreateMessageResult); without one, sampling is declined",
    )  # fmt: skip
    call.add_argument(
        "--no-prompt", action="store_true",
        help="never prompt on the terminal: what --answer/--sample do not answer is declined",
    )  # fmt: skip


def _answer_value(text: str) -> ElicitationResponse:
    if text in _WORDS:
        return ElicitationResponse(text)  # type: ignore[arg-type]
    try:
        value = json.loads(text)
    except ValueError:
        raise ValueError(f"{text!r} is not accept, decline, cancel or a JSON object") from None
    if not isinstance(value, dict):
        raise ValueError(f"{text!r} is not accept, decline, cancel or a JSON object")
    if value.get("action") in _WORDS and value.keys() <= {"action", "content"}:
        content = value.get("content")
        if content is not None and not isinstance(content, dict):
            raise ValueError(f"{text!r}: content must be an object")
        return ElicitationResponse(value["action"], content)
    return ElicitationResponse.accept(value)


def _sample_value(text: str) -> SamplingResponse:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return SamplingResponse(value)
    return SamplingResponse.text(text, model=CLI_MODEL)


def read_input_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check ``--answer``/``--sample`` before connecting (a usage error exits 2)."""
    try:
        args.answers = [_answer_value(text) for text in args.answer]
    except ValueError as exc:
        parser.error(f"--answer: {exc}")
    args.samples = [_sample_value(text) for text in args.sample]


def _who(request: InputRequest) -> str:
    origin = request.origin
    if origin is None:
        return "the tool"
    server = f" / {origin.mcp_server}" if origin.mcp_server else ""
    return f"{origin.computer}{server} (tool {origin.tool})"


class CliInput:
    """The ``call`` command's input handler."""

    def __init__(
        self,
        args: argparse.Namespace,
        *,
        err: TextIO,
        read: Callable[[], str] | None,
        before_prompt: Callable[[], None] = lambda: None,
    ) -> None:
        self._answers: list[ElicitationResponse] = list(args.answers)
        self._samples: list[SamplingResponse] = list(args.samples)
        self._err = err
        self._read = read  # None: no terminal to ask on
        self._before_prompt = before_prompt
        #: Every request and its answer, for ``--json``.
        self.exchanges: list[dict[str, Any]] = []

    async def __call__(self, request: InputRequest) -> InputResponse:
        if self._read is None:
            response = self._respond(request)
        else:  # a prompt blocks on the terminal: not on the loop, and not past Ctrl-C
            response = await _in_daemon_thread(self._respond, request)
        self.exchanges.append(
            {
                "key": request.key,
                "method": request.method,
                "mcp_server": request.origin.mcp_server if request.origin else None,
                "params": request.params,
                "answer": response_to_wire(response),
            }
        )
        return response

    def _say(self, line: str) -> None:
        self._err.write(f"a2c-agent: {line}\n")
        self._err.flush()

    def _respond(self, request: InputRequest) -> InputResponse:
        if isinstance(request, ElicitationRequest):
            if request.mode == "form":
                secret = secret_fields(request.requested_schema)
                if secret:
                    self._say(f"declined the form of {_who(request)}: it asks for a secret "
                              f"({', '.join(secret)}), which MCP forbids in a form")  # fmt: skip
                    return ElicitationResponse.decline()
            if self._answers:
                return self._given(request, self._answers.pop(0))
            if self._read is not None:
                self._before_prompt()
                return (
                    self._prompt_url(request)
                    if request.mode == "url"
                    else self._prompt_form(request)
                )
            self._say(f"declined {request.mode} request of {_who(request)}: "
                      f"{request.message!r} (no --answer left, no terminal to ask on)")  # fmt: skip
            return ElicitationResponse.decline()
        if isinstance(request, SamplingRequest):
            if self._samples:
                self._say(f"answered the sampling request of {_who(request)} with --sample")
                return self._samples.pop(0)
            if self._read is not None:
                self._before_prompt()
                return self._prompt_sampling(request)
            self._say(f"declined the sampling request of {_who(request)} (no --sample given)")
            return InputRefusal("sampling declined: a2c-agent call was given no --sample")
        self._say(f"refused {request.method} of {_who(request)}")
        return InputRefusal(f"{request.method} is not answered by a2c-agent")

    def _given(self, request: ElicitationRequest, answer: ElicitationResponse) -> InputResponse:
        if answer.action == "accept" and request.mode == "form":
            assert request.requested_schema is not None
            problems = content_problems(request.requested_schema, answer.content or {})
            if problems:
                raise ValueError(
                    f"--answer does not fit the form of {_who(request)} ({request.message!r}): "
                    + "; ".join(problems)
                )
        if answer.action == "accept" and request.mode == "url":
            answer = ElicitationResponse.accept()  # a URL's acceptance carries no content
        self._say(f"answered {request.mode} request of {_who(request)} with {answer.action}")
        return answer

    # ------------------------------------------------------------------- prompts

    def _ask(self, prompt: str) -> str | None:
        """One line from the terminal (None at end of input)."""
        assert self._read is not None
        self._err.write(prompt)
        self._err.flush()
        line = self._read()
        return None if line == "" else line.rstrip("\r\n")

    def _choose(self, prompt: str, choices: str, default: str) -> str:
        while True:
            line = self._ask(prompt)
            if line is None:
                return "c"
            picked = (line.strip().lower() or default)[:1]
            if picked in choices:
                return picked
            self._err.write(f"  answer one of {', '.join(choices)}\n")

    def _prompt_form(self, request: ElicitationRequest) -> InputResponse:
        assert request.requested_schema is not None
        try:
            fields = form_fields(request.requested_schema)
        except ValueError as exc:
            self._say(f"declined the form of {_who(request)}: {exc}")
            return ElicitationResponse.decline()
        self._err.write(f"\n{_who(request)} asks:\n  {request.message}\n")
        while True:
            content: dict[str, Any] = {}
            for field in fields:
                value = self._prompt_field(field)
                if value is _CANCEL:
                    return ElicitationResponse.cancel()
                if value is not _SKIP:
                    content[field.name] = value
            shown = json.dumps(content, ensure_ascii=False)
            picked = self._choose(
                f"Send {shown}? [Y]es / [e]dit / [d]ecline / [c]ancel: ", "yedc", "y"
            )
            if picked == "y":
                return ElicitationResponse.accept(content)
            if picked in "dc":
                return (
                    ElicitationResponse.decline() if picked == "d" else ElicitationResponse.cancel()
                )

    def _prompt_field(self, field: FormField) -> Any:
        hint = _field_hint(field)
        while True:
            line = self._ask(f"  {field.label}{hint}: ")
            if line is None:
                return _CANCEL
            if not line.strip():
                if field.default is not None:
                    return field.default
                if not field.required:
                    return _SKIP
                self._err.write("  required\n")
                continue
            try:
                return parse_field(field, line)
            except ValueError as exc:
                self._err.write(f"  {exc}\n")

    def _prompt_url(self, request: ElicitationRequest) -> InputResponse:
        host = urlsplit(request.url or "").hostname or "?"
        self._err.write(
            f"\n{_who(request)} asks you to open a URL (a2c-agent does not open it):\n"
            f"  {request.message}\n  URL:  {request.url}\n  host: {host}\n"
        )
        picked = self._choose(
            "Open it yourself, then: [a]ccept / [d]ecline / [c]ancel: ", "adc", ""
        )
        return ElicitationResponse({"a": "accept", "d": "decline", "c": "cancel"}[picked])  # type: ignore[arg-type]

    def _prompt_sampling(self, request: SamplingRequest) -> InputResponse:
        self._err.write(f"\n{_who(request)} asks the model (sampling):\n")
        if request.system_prompt:
            self._err.write(f"  system: {request.system_prompt}\n")
        for message in request.messages:
            self._err.write(f"  {message.get('role', '?')}: {_message_text(message)}\n")
        if request.wants_tools:
            names = [t.get("name") for t in request.params.get("tools", []) if isinstance(t, dict)]
            self._err.write(f"  (the model may use tools: {', '.join(map(str, names))})\n")
        line = self._ask("Type the model's reply (an empty line declines): ")
        if not line or not line.strip():
            return InputRefusal("sampling declined by the user")
        return SamplingResponse.text(line.strip(), model=CLI_MODEL)


_SKIP = object()
_CANCEL = object()
T = TypeVar("T")
A = TypeVar("A")


async def _in_daemon_thread(function: Callable[[A], T], arg: A) -> T:
    """``function(arg)`` on a daemon thread: a prompt still waiting for a line when the
    command is interrupted must not hold the process (``asyncio.to_thread`` would: the
    loop's shutdown joins its worker threads)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if not future.done():
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)

    def run() -> None:
        try:
            outcome: tuple[Any, BaseException | None] = (function(arg), None)
        except BaseException as exc:
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=run, name="a2c-agent-prompt", daemon=True).start()
    return await future


def _field_hint(field: FormField) -> str:
    parts: list[str] = [field.kind if field.kind != "multi" else "several, comma-separated"]
    if field.options:
        parts.append(" | ".join(f"{n}) {label}" for n, (_, label) in enumerate(field.options, 1)))
    if field.format:
        parts.append(field.format)
    if field.required:
        parts.append("required")
    text = f" ({'; '.join(parts)})"
    if field.description:
        text = f" - {field.description}{text}"
    if field.default is not None:
        text += f" [{field.default}]"
    return text


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    items = content if isinstance(content, list) else [content]
    texts = [
        item.get("text", f"<{item.get('type')}>") if isinstance(item, dict) else str(item)
        for item in items
    ]
    return " ".join(str(t) for t in texts)
