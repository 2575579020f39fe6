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

Everything a peer wrote (message, URL, server and tool names, form titles, descriptions,
choices and defaults, sampling prompts) is printed through :func:`._visible.visible`:
control characters are shown escaped, never sent to the terminal raw. A prompt says by
when the Computer wants the answer (the round's ``expires_in``); the SDK stops waiting then.
Kinds the call did not declare and links that are not web links never get here: the SDK
answers them (see :mod:`a2c_agent._rpc._input`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO, TypeVar
from urllib.parse import urlsplit

from a2c_agent._rpc._input import input_deadline
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

from ._visible import visible

__all__ = ["CliInput", "add_input_args", "read_input_args"]

_WORDS = ("accept", "decline", "cancel")
#: What the review of a filled form takes: each documented word, its letter, and yes.
_REVIEW: dict[str, str] = {
    **dict.fromkeys(("", "s", "send", "y", "yes"), "s"),
    **{word: word[0] for word in ("edit", "decline", "cancel")},
    **{word[0]: word[0] for word in ("edit", "decline", "cancel")},
}
#: What a URL's prompt takes: the three answers and their letters.
_URL_CHOICES: dict[str, str] = {
    **{word: word[0] for word in _WORDS},
    **{word[0]: word[0] for word in _WORDS},
}
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
    server = f" / {visible(origin.mcp_server, one_line=True)}" if origin.mcp_server else ""
    computer, tool = visible(origin.computer, one_line=True), visible(origin.tool, one_line=True)
    return f"{computer}{server} (tool {tool})"


def _until(deadline: float | None) -> str:
    """The prompt's line saying by when to answer (empty when the Computer said nothing)."""
    if deadline is None:
        return ""
    left = max(0, round(deadline - time.time()))
    clock = time.strftime("%H:%M:%S", time.localtime(deadline))
    return f"  (answer by {clock}, within {left} s)\n"


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
        self._deadline: float | None = None
        #: Every request and its answer, for ``--json``.
        self.exchanges: list[dict[str, Any]] = []

    async def __call__(self, request: InputRequest) -> InputResponse:
        self._deadline = input_deadline()  # the SDK's, read here: threads do not see it
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
        self._write(f"a2c-agent: {line}\n")
        self._err.flush()

    def _write(self, text: str) -> None:
        """Write to the terminal; peer text in ``text`` was made visible where it was put
        in, and this catches what was not."""
        self._err.write(visible(text))

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
        self._write(prompt)
        self._err.flush()
        line = self._read()
        return None if line == "" else line.rstrip("\r\n")

    def _choose(self, prompt: str, choices: dict[str, str]) -> str:
        """The letter of the answer typed (a word or its letter); ``c`` at end of input."""
        while True:
            line = self._ask(prompt)
            if line is None:
                return "c"
            picked = choices.get(line.strip().lower())
            if picked is not None:
                return picked
            words = sorted(w for w in choices if len(w) > 1 and w not in ("y", "yes"))
            self._write(f"  answer one of {', '.join(words)} (or its first letter)\n")

    def _prompt_form(self, request: ElicitationRequest) -> InputResponse:
        assert request.requested_schema is not None
        try:
            fields = form_fields(request.requested_schema)
        except ValueError as exc:
            self._say(f"declined the form of {_who(request)}: {exc}")
            return ElicitationResponse.decline()
        self._write(f"\n{_who(request)} asks:\n  {visible(request.message)}\n")
        self._write(_until(self._deadline))
        while True:
            content: dict[str, Any] = {}
            for field in fields:
                value = self._prompt_field(field)
                if value is _CANCEL:
                    return ElicitationResponse.cancel()
                if value is not _SKIP:
                    content[field.name] = value
            shown = visible(json.dumps(content, ensure_ascii=False), one_line=True)
            picked = self._choose(
                f"Send {shown}? [S]end / [e]dit / [d]ecline / [c]ancel: ", _REVIEW
            )
            if picked == "s":
                return ElicitationResponse.accept(content)
            if picked in "dc":
                return (
                    ElicitationResponse.decline() if picked == "d" else ElicitationResponse.cancel()
                )

    def _prompt_field(self, field: FormField) -> Any:
        hint = _field_hint(field)
        while True:
            line = self._ask(f"  {visible(field.label, one_line=True)}{hint}: ")
            if line is None:
                return _CANCEL
            if not line.strip():
                if field.default is not None:
                    return field.default
                if not field.required:
                    return _SKIP
                self._write("  required\n")
                continue
            try:
                return parse_field(field, line)
            except ValueError as exc:
                self._write(f"  {visible(exc)}\n")

    def _prompt_url(self, request: ElicitationRequest) -> InputResponse:
        host = urlsplit(request.url or "").hostname or "?"
        self._write(
            f"\n{_who(request)} asks you to open a URL (a2c-agent does not open it):\n"
            f"  {visible(request.message)}\n  URL:  {visible(request.url, one_line=True)}\n"
            f"  host: {visible(host, one_line=True)}\n{_until(self._deadline)}"
        )
        picked = self._choose(
            "Open it yourself, then: [a]ccept / [d]ecline / [c]ancel: ", _URL_CHOICES
        )
        return ElicitationResponse({"a": "accept", "d": "decline", "c": "cancel"}[picked])  # type: ignore[arg-type]

    def _prompt_sampling(self, request: SamplingRequest) -> InputResponse:
        self._write(f"\n{_who(request)} asks the model (sampling):\n")
        self._write(_until(self._deadline))
        if request.system_prompt:
            self._write(f"  system: {visible(request.system_prompt)}\n")
        for message in request.messages:
            role = visible(message.get("role", "?"), one_line=True)
            self._write(f"  {role}: {visible(_message_text(message))}\n")
        if request.wants_tools:
            names = [t.get("name") for t in request.params.get("tools", []) if isinstance(t, dict)]
            shown = ", ".join(visible(n, one_line=True) for n in names)
            self._write(f"  (the model may use tools: {shown})\n")
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
        parts.append(" | ".join(f"{n}) {visible(label, one_line=True)}"
                                for n, (_, label) in enumerate(field.options, 1)))  # fmt: skip
    if field.format:
        parts.append(visible(field.format, one_line=True))
    if field.required:
        parts.append("required")
    text = f" ({'; '.join(parts)})"
    if field.description:
        text = f" - {visible(field.description, one_line=True)}{text}"
    if field.default is not None:
        text += f" [{visible(field.default, one_line=True)}]"
    return text


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    items = content if isinstance(content, list) else [content]
    texts = [
        item.get("text", f"<{item.get('type')}>") if isinstance(item, dict) else str(item)
        for item in items
    ]
    return " ".join(str(t) for t in texts)
