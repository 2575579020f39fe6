"""Test MCP server whose tools ask the user, the model or the roots, as authors write them.

Run: ``python -m a2c_testkit.mcp_servers.asking [--http PORT]`` (stdio by default; with
``--http``, Streamable HTTP at ``/mcp``, printing ``PORT <n>`` once it listens). Written on
mcp 2 (``MCPServer``), it serves both MCP eras; the Computer's config chooses one
(``mcp_era``). Every tool answers one text line, so a test reads what reached the server.

Server-initiated requests (the handshake era only; in 2026-07-28 they fail with "no
back-channel"):

* ``greet``: ``ctx.elicit`` a form (``name``, optional ``age``) -> ``hello <name>[ (<age>)]``,
  or ``greet:<action>`` when declined or cancelled, ``greet failed: <error>`` when refused;
* ``sign_in``: ``ctx.elicit_url`` -> ``sign_in:<action>``;
* ``password``: a form asking for a password (MCP forbids it) -> the outcome, or
  ``password failed: <error>``;
* ``ask_model``: ``ctx.session.create_message`` -> ``model:<reply text>``;
* ``ask_model_tools``: the same, offering the tool ``get_weather`` -> ``model used
  <tool>(<input>)`` or ``model:<text>``;
* ``roots``: ``ctx.session.list_roots()`` -> ``roots:<uri>,<uri>``;
* ``twice``: two forms in a row -> ``twice:<first>,<second>``.

Era-agnostic resolvers (``Annotated[T, Resolve(fn)]``; an ``input_required`` result in
2026-07-28, a server-initiated request in the handshake era):

* ``resolved_greet``: ``Elicit`` -> ``resolved hello <name>``;
* ``resolved_sample``: ``Sample`` -> ``resolved model:<text>``;
* ``resolved_roots``: ``ListRoots`` -> ``resolved roots:<uri>,...``.

And ``echo {text}`` -> ``<protocol version>:<text>``, ``pause {seconds}`` -> ``paused``
(they ask nothing).
"""

from __future__ import annotations

import json
import warnings
from typing import Annotated

import anyio
from mcp import MCPDeprecationWarning, types
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from pydantic import BaseModel, Field

from ._kit import run_from_argv

__all__ = ["build_server", "main"]

# Sampling and roots are deprecated in 2026-07-28 (SEP-2577); this server uses them on purpose.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)


class Person(BaseModel):
    name: str = Field(description="your name")
    age: int | None = Field(default=None, description="your age")


class Login(BaseModel):
    user: str
    password: str


class Name(BaseModel):
    name: str


def _said(result: types.CreateMessageResult | types.CreateMessageResultWithTools) -> str:
    blocks = result.content if isinstance(result.content, list) else [result.content]
    for block in blocks:
        if isinstance(block, types.ToolUseContent):
            return f"model used {block.name}({json.dumps(block.input, sort_keys=True)})"
    texts = [b.text for b in blocks if isinstance(b, types.TextContent)]
    return "model:" + " ".join(texts)


def _question(text: str) -> list[types.SamplingMessage]:
    return [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))]


WEATHER = types.Tool(
    name="get_weather",
    description="The weather of a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"]},
)  # fmt: skip


async def _ask_person() -> Elicit[Name]:
    return Elicit("Who are you?", Name)


async def _ask_sample() -> Sample:
    return Sample(_question("Say a colour"), max_tokens=20)


async def _ask_roots() -> ListRoots:
    return ListRoots()


def build_server() -> MCPServer:
    server = MCPServer("a2c-test-asking", version="1.0.0")

    @server.tool()
    async def echo(text: str, ctx: Context) -> str:
        """Echo the text after the protocol version of the call."""
        return f"{ctx.protocol_version}:{text}"

    @server.tool()
    async def pause(seconds: float) -> str:
        """Sleep, then answer (a call that keeps the server busy)."""
        await anyio.sleep(seconds)
        return "paused"

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Ask the user's name with a form."""
        try:
            result = await ctx.elicit("What is your name?", Person)
        except Exception as exc:
            return f"greet failed: {exc}"
        if result.action == "accept" and result.data is not None:
            age = f" ({result.data.age})" if result.data.age is not None else ""
            return f"hello {result.data.name}{age}"
        return f"greet:{result.action}"

    @server.tool()
    async def sign_in(ctx: Context) -> str:
        """Send the user to a sign-in page."""
        try:
            result = await ctx.elicit_url(
                "Sign in to the wiki", "https://wiki.example.test/connect?s=1", "sign-in-1"
            )
        except Exception as exc:
            return f"sign_in failed: {exc}"
        return f"sign_in:{result.action}"

    @server.tool()
    async def password(ctx: Context) -> str:
        """Ask for a password in a form (MCP forbids it)."""
        try:
            result = await ctx.elicit("Log in", Login)
        except Exception as exc:
            return f"password failed: {exc}"
        return f"password:{result.action}"

    @server.tool()
    async def ask_model(question: str, ctx: Context) -> str:
        """Ask the client's model."""
        try:
            result = await ctx.session.create_message(_question(question), max_tokens=50)
        except Exception as exc:
            return f"ask_model failed: {exc}"
        return _said(result)

    @server.tool()
    async def ask_model_tools(question: str, ctx: Context) -> str:
        """Ask the client's model, offering it a tool."""
        try:
            result = await ctx.session.create_message(
                _question(question), max_tokens=50, tools=[WEATHER]
            )
        except Exception as exc:
            return f"ask_model_tools failed: {exc}"
        return _said(result)

    @server.tool()
    async def roots(ctx: Context) -> str:
        """List the client's roots."""
        try:
            result = await ctx.session.list_roots()
        except Exception as exc:
            return f"roots failed: {exc}"
        return "roots:" + ",".join(str(root.uri) for root in result.roots)

    @server.tool()
    async def twice(ctx: Context) -> str:
        """Ask two forms in a row."""
        answers = []
        for question in ("First?", "Second?"):
            result = await ctx.elicit(question, Name)
            answers.append(
                result.data.name if result.action == "accept" and result.data else result.action
            )
        return "twice:" + ",".join(answers)

    @server.tool()
    async def resolved_greet(person: Annotated[Name, Resolve(_ask_person)]) -> str:
        """Ask the user's name through a resolver."""
        return f"resolved hello {person.name}"

    @server.tool()
    async def resolved_sample(
        reply: Annotated[types.CreateMessageResult, Resolve(_ask_sample)],
    ) -> str:
        """Ask the model through a resolver."""
        return "resolved " + _said(reply)

    @server.tool()
    async def resolved_roots(found: Annotated[types.ListRootsResult, Resolve(_ask_roots)]) -> str:
        """List the roots through a resolver."""
        return "resolved roots:" + ",".join(str(root.uri) for root in found.roots)

    return server


def main() -> None:
    run_from_argv(build_server)


if __name__ == "__main__":
    main()
