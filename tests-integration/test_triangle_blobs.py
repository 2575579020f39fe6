"""Large results through the real triangle: blobs by handle, never a dropped link.

The Server is ``a2c-server`` (1 MB message limit), the Computer ``a2c-computer run`` with the
``bulk`` test MCP server over stdio; the Agent is the library in-process.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent, BlobNotAccessibleError, result_error_code
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.processes import bin_path
from a2c_testkit.triangle import Deployment, computer_process, deployment, eventually, write_config

MB = 1_000_000


def bulk_config(tmp_path: Path) -> Path:
    entry = stdio_server_config("bulk", "bulk", default_tool_meta={"auto_apply": True})
    return write_config(tmp_path / "computer.json", [entry])


@contextlib.asynccontextmanager
async def bulk_triangle(
    procs: Any, tmp_path: Path, computer_args: Sequence[str] = ()
) -> AsyncIterator[Deployment]:
    spool = tmp_path / "spool-box-1"
    async with deployment(
        procs.log_dir,
        bulk_config(tmp_path),
        computer_name="box-1",
        track=procs.track,
        computer_args=["--blob-spool-dir", str(spool), *computer_args],
    ) as running:
        yield running


async def computer_sid(agent: AsyncAgent, name: str) -> str:
    room = await agent.list_room()
    return next(s.sid for s in room if s.name == name)


def facts(result: Any) -> tuple[str, int]:
    text = next(i["text"] for i in result.content if i.get("type") == "text")
    sha, size = (part.split("=", 1)[1] for part in text.split())
    return sha, int(size)


def spool_files(spool: Path) -> list[Path]:
    data = spool / "data"
    return [p for p in data.iterdir() if not p.name.startswith(".")] if data.exists() else []


async def test_big_png_arrives_by_handle_and_big_text_is_a_clear_error(
    procs: Any, tmp_path: Path
) -> None:
    async with bulk_triangle(procs, tmp_path) as t:
        agent = t.agent
        sid = await computer_sid(agent, "box-1")

        result = await agent.call_tool("box-1", "png", {"size": 5 * MB, "seed": 1}, timeout=120)
        assert not result.is_error
        image = result.content[0]
        png = base64.b64decode(image["data"])
        sha, size = facts(result)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert (hashlib.sha256(png).hexdigest(), len(png)) == (sha, size)
        assert image["_meta"]["a2c_total_size"] == size  # the sideband stays visible
        handle = image["_meta"]["a2c_blob_handle"]

        again = await agent.read_blob("box-1", handle)  # explicitly through client:get_blob
        assert (again.sha256, again.size, again.mime_type) == (sha, size, "image/png")
        assert again.data == png

        text = await agent.call_tool("box-1", "text", {"size": 2 * MB}, timeout=120)
        assert text.is_error
        assert result_error_code(text) == 4003
        assert text.meta is not None and text.meta["reason"] == "result_too_large"
        assert text.meta["size_bytes"] > 2 * MB and text.meta["limit_bytes"] < MB
        assert "bytes" in text.content[0]["text"]

        assert await computer_sid(agent, "box-1") == sid  # never disconnected
        small = await agent.call_tool("box-1", "png", {"size": 10_000}, timeout=60)
        assert not small.is_error and "a2c_blob_handle" not in (small.content[0].get("_meta") or {})
        assert await computer_sid(agent, "box-1") == sid
    computer_log = t.computer.logs()
    assert "result of tool text is" in computer_log and "over the message limit" in computer_log
    assert "exceeded max_message_bytes" not in t.server.process.logs()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts fds in /proc")
async def test_forty_images_keep_the_spool_capped_and_no_fds_leak(
    procs: Any, tmp_path: Path
) -> None:
    # Forty half-megabyte images through a 2 MB spool evict it ~ten times over: enough to see
    # a leak of files or descriptors, at a fifth of the bytes a hundred 1 MB images cost.
    cap = 2 * MB
    size = MB // 2
    args = ["--blob-spool-max-bytes", str(cap), "--blob-ttl", "10"]
    async with bulk_triangle(procs, tmp_path, args) as t:
        spool = tmp_path / "spool-box-1"
        sid = await computer_sid(t.agent, "box-1")
        fds = Path(f"/proc/{t.computer.pid}/fd")
        warm = await t.agent.call_tool("box-1", "png", {"size": size, "seed": 1000}, timeout=60)
        assert not warm.is_error
        before = len(list(fds.iterdir()))
        for i in range(40):
            result = await t.agent.call_tool("box-1", "png", {"size": size, "seed": i}, timeout=60)
            assert not result.is_error
            sha, _ = facts(result)
            assert hashlib.sha256(base64.b64decode(result.content[0]["data"])).hexdigest() == sha
            assert sum(p.stat().st_size for p in spool_files(spool)) <= cap
        after = len(list(fds.iterdir()))
        assert after <= before + 5, (before, after)
        assert await computer_sid(t.agent, "box-1") == sid
        await eventually(lambda: not spool_files(spool), timeout=120, what="spool emptied by TTL")


async def test_bad_blob_requests_get_their_4018_reason(procs: Any, tmp_path: Path) -> None:
    async with bulk_triangle(procs, tmp_path) as t:
        agent = t.agent
        sid = await computer_sid(agent, "box-1")
        result = await agent.call_tool(
            "box-1", "png", {"size": 300_000, "seed": 7}, timeout=60, drain_blobs=False
        )
        item = result.content[0]
        assert item["data"] == ""
        handle = item["_meta"]["a2c_blob_handle"]
        size = item["_meta"]["a2c_total_size"]

        async def reason(**kwargs: Any) -> str | None:
            with pytest.raises(BlobNotAccessibleError) as exc:
                await agent.get_blob("box-1", **kwargs)
            return exc.value.reason

        forged = handle[:-4] + ("AAAA" if not handle.endswith("AAAA") else "BBBB")
        assert await reason(handle=forged) == "invalid_handle"
        assert await reason(handle="not-a-handle") == "invalid_handle"
        assert await reason(handle=handle, offset=-1) == "range"
        assert await reason(handle=handle, offset=size + 1) == "range"
        end = await agent.get_blob("box-1", handle, offset=size)
        assert (end.blob, end.eof, end.total_size) == ("", True, size)

        huge = await agent.get_blob("box-1", handle, max_chunk_bytes=10**12)
        assert 0 < len(base64.b64decode(huge.blob)) <= 256 * 1024 and not huge.eof

        other_spool = tmp_path / "spool-box-2"
        async with computer_process(
            procs.log_dir,
            config=bulk_config(tmp_path),
            server_url=t.server.url,
            office=t.office,
            name="box-2",
            track=procs.track,
            extra_args=["--blob-spool-dir", str(other_spool)],
        ):
            await eventually(lambda: agent.tools.get("box-2"), what="box-2 joined")
            theirs = await agent.call_tool(
                "box-2", "png", {"size": 300_000, "seed": 8}, timeout=60, drain_blobs=False
            )
            foreign = theirs.content[0]["_meta"]["a2c_blob_handle"]
            assert await reason(handle=foreign) == "invalid_handle"
            assert (await agent.read_blob("box-2", foreign)).size == theirs.content[0]["_meta"][
                "a2c_total_size"
            ]

        for path in spool_files(tmp_path / "spool-box-1"):
            os.unlink(path)
        assert await reason(handle=handle) == "gone"
        assert await computer_sid(agent, "box-1") == sid
        ok = await agent.call_tool("box-1", "text", {"size": 10}, timeout=60)
        assert not ok.is_error


async def run_cli(*argv: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        bin_path("a2c-agent"),
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_cli_downloads_a_blob_and_saves_binary_items(procs: Any, tmp_path: Path) -> None:
    async with bulk_triangle(procs, tmp_path) as t:
        result = await t.agent.call_tool(
            "box-1", "png", {"size": 2 * MB, "seed": 3}, timeout=60, drain_blobs=False
        )
        handle = result.content[0]["_meta"]["a2c_blob_handle"]
        sha, size = facts(result)
        await t.agent.leave_office()  # the office has one Agent seat: hand it to the CLI
        base = ["--server", t.server.url, "--office", t.office, "--json"]

        target = tmp_path / "pulled.png"
        code, out, err = await run_cli(*base, "blob", "box-1", handle, "-o", str(target))
        assert code == 0, err
        assert json.loads(out) == {
            "file": str(target),
            "size": size,
            "sha256": sha,
            "mime_type": "image/png",
        }
        assert hashlib.sha256(target.read_bytes()).hexdigest() == sha

        saved = tmp_path / "saved"
        saved.mkdir()  # the CLI never creates a --save-dir
        params = json.dumps({"size": 2 * MB, "seed": 4})
        code, out, err = await run_cli(
            *base, "call", "box-1", "png", params, "--save-dir", str(saved)
        )
        assert code == 0, err
        printed = json.loads(out)
        image, text = printed["content"]
        path = Path(image["_meta"]["a2c_saved_to"])
        assert image["data"] == "" and path.parent == saved and path.suffix == ".png"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == text["text"].split()[0][7:]

        code, _, err = await run_cli(*base, "blob", "box-1", "forged", "-o", str(tmp_path / "x"))
        assert code == 1 and "4018" in err


async def test_raising_both_limits_lets_a_5mb_text_through(procs: Any, tmp_path: Path) -> None:
    limit = str(8 * MB)
    async with deployment(
        procs.log_dir,
        bulk_config(tmp_path),
        computer_name="box-1",
        track=procs.track,
        server_args=["--max-message-bytes", limit],
        computer_args=["--blob-spool-dir", str(tmp_path / "spool"), "--max-message-bytes", limit],
    ) as t:
        sid = await computer_sid(t.agent, "box-1")
        text = await t.agent.call_tool("box-1", "text", {"size": 5 * MB}, timeout=120)
        assert not text.is_error and len(text.content[0]["text"]) == 5 * MB
        assert await computer_sid(t.agent, "box-1") == sid
