"""``a2c-agent skill``: print or save one skill file.

Rules:

* text (a text MIME whose bytes are valid UTF-8) goes to stdout as is, unless ``--json``
  asks for a JSON object (metadata plus ``body``);
* binary is written to ``-o FILE``, or to stdout when stdout is not a terminal (a pipe or a
  redirect); printing binary to a terminal is refused with a message naming ``-o``;
* with ``-o FILE`` any file is written as raw bytes and a summary is printed.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any, TextIO

from a2c_agent._exceptions import AgentError
from a2c_agent._skills import SkillFile

from ._dest import write_file

if TYPE_CHECKING:
    from a2c_agent._agent import AsyncAgent

__all__ = ["RAW", "BinaryToTerminalError", "skill_command"]

#: The kind of output already written to stdout (nothing left to print).
RAW = "raw"


class BinaryToTerminalError(AgentError):
    """A binary skill file would have been printed to a terminal."""


def _text_of(skill: SkillFile) -> str | None:
    if not skill.is_text:
        return None
    try:
        return skill.text()
    except UnicodeDecodeError:
        return None


async def skill_command(
    agent: AsyncAgent, args: argparse.Namespace, out: TextIO
) -> tuple[str, Any]:
    """Fetch the file and write it (see the module rules); returns (kind, data)."""
    skill = await agent.get_skill(args.computer, args.name, args.rel_path)
    summary = {
        "name": skill.name,
        "rel_path": skill.rel_path,
        "mime_type": skill.mime_type,
        "size": skill.size,
        "sha256": skill.sha256,
    }
    if args.file is not None:
        await asyncio.to_thread(write_file, args.file, skill.data, overwrite=args.overwrite)
        return "blob", {"file": args.file, **summary}
    text = _text_of(skill)
    if text is not None:
        if args.output == "json":
            return "skill", {**summary, "body": text}
        out.write(text)
        out.flush()
        return RAW, None
    if out.isatty():
        raise BinaryToTerminalError(
            f"{skill.rel_path} of {skill.name} is binary ({skill.mime_type}, {skill.size} "
            "bytes); not printing it to a terminal: use -o FILE or redirect stdout"
        )
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        raise BinaryToTerminalError(f"{skill.rel_path} is binary; use -o FILE")
    buffer.write(skill.data)
    buffer.flush()
    return RAW, None
