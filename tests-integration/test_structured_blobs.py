"""Images that MCP servers return twice, in ``content`` and in ``structuredContent``,
through the real triangle.

The reference filesystem MCP server (npm, pinned) answers ``read_media_file`` with the same
base64 in both places, and so does a FastMCP tool annotated to return ``ImageContent``. A
5 MB image used to end in ``4003 result_too_large`` while the Computer logged and counted
``ok``. Now the copy in ``structuredContent`` travels as a reference to the content item
(``meta.a2c_structured_refs``) and the Agent gets the full bytes back in both places; a
result the Computer does turn into an error is logged and counted as one.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2c_agent import result_error_code
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.mcp_servers.bulk import noise_png
from a2c_testkit.metrics import metric_sample as sample
from a2c_testkit.triangle import deployment, write_config

MB = 1_000_000
#: The reference filesystem server, pinned (``npm view @modelcontextprotocol/server-filesystem
#: versions`` lists the others).
FS_PACKAGE = "@modelcontextprotocol/server-filesystem"
FS_VERSION = "2026.8.31"


@pytest.fixture(scope="session")
def filesystem_server_bin() -> Path:
    """The npm package installed once into a cache directory shared by test runs."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("node and npm are required in CI (.ci/run installs them)")
        pytest.skip("node/npm not installed")
    base = Path(os.environ.get("A2C_TEST_NPM_DIR") or Path.home() / ".cache" / "a2c-smcp-tests")
    prefix = base / f"server-filesystem-{FS_VERSION}"
    binary = prefix / "node_modules" / ".bin" / "mcp-server-filesystem"
    if not binary.exists():
        # Install next to it, then move into place: concurrent runs never see half of it.
        base.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".install-", dir=base))
        try:
            subprocess.run(
                [npm, "install", "--prefix", str(scratch), "--no-audit", "--no-fund",
                 "--loglevel", "error", f"{FS_PACKAGE}@{FS_VERSION}"],
                check=True, timeout=600,
            )  # fmt: skip
            with contextlib.suppress(OSError):  # another run was first: use its copy
                scratch.rename(prefix)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    assert binary.exists(), f"npm did not install {binary}"
    return binary


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_a_5_mb_image_returned_twice_arrives_whole_in_both_places(
    procs: Any, tmp_path: Path, filesystem_server_bin: Path
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    png = noise_png(5 * MB, seed=24)
    (files / "big.png").write_bytes(png)
    auto = {"auto_apply": True}
    servers = [
        {
            "type": "stdio",
            "name": "fs",
            "default_tool_meta": auto,
            "server_parameters": {"command": str(filesystem_server_bin), "args": [str(files)]},
        },
        stdio_server_config("fastimg", "fastmcp_image", default_tool_meta=auto),
        stdio_server_config("bulk", "bulk", default_tool_meta=auto),
    ]
    config = write_config(tmp_path / "computer.json", servers)
    args = ["--metrics-port", "0", "--blob-spool-dir", str(tmp_path / "spool")]
    async with deployment(
        procs.log_dir, config, computer_name="box", track=procs.track, computer_args=args
    ) as t:
        result = await t.agent.call_tool(
            "box", "read_media_file", {"path": str(files / "big.png")}, timeout=120
        )
        assert not result.is_error, result.content
        item = result.content[0]
        assert item["_meta"]["a2c_total_size"] == len(png)  # it travelled by handle
        assert sha(base64.b64decode(item["data"])) == sha(png)
        assert result.structured_content is not None
        copy = result.structured_content["content"][0]["data"]
        assert sha(base64.b64decode(copy)) == sha(png)
        assert "a2c_structured_refs" not in (result.meta or {})

        fast_png = noise_png(3 * MB, seed=5)
        fast = await t.agent.call_tool("box", "image", {"size": 3 * MB, "seed": 5}, timeout=120)
        assert not fast.is_error, fast.content
        assert sha(base64.b64decode(fast.content[0]["data"])) == sha(fast_png)
        assert fast.structured_content is not None
        assert sha(base64.b64decode(fast.structured_content["data"])) == sha(fast_png)

        # Without draining, the reference is what travels: the copy is empty, its place named.
        raw = await t.agent.call_tool(
            "box", "image", {"size": 3 * MB, "seed": 5}, timeout=120, drain_blobs=False
        )
        assert raw.structured_content is not None and raw.structured_content["data"] == ""
        assert raw.meta is not None
        assert raw.meta["a2c_structured_refs"] == [{"path": "/data", "content_index": 0}]

        # Text cannot travel by handle: a clear error, logged and counted as an error.
        text = await t.agent.call_tool("box", "text", {"size": 2 * MB}, timeout=120)
        assert result_error_code(text) == 4003

        log = t.computer.logs()
        found = re.search(r"metrics on (http://\S+/metrics)", log)
        assert found is not None
        async with httpx.AsyncClient(timeout=10) as client:
            metrics = (await client.get(found.group(1))).text
    assert re.search(r"tool call read_media_file on fs by planner: ok in", log)
    assert re.search(r"tool call text on bulk by planner: error 4003 in", log)
    assert "tool call text on bulk by planner: ok" not in log
    calls = "a2c_computer_tool_calls_total"
    assert sample(metrics, calls, mcp_server="bulk", tool="text", outcome="error") == 1
    assert sample(metrics, calls, mcp_server="bulk", tool="text", outcome="ok") is None
    assert sample(metrics, calls, mcp_server="fs", tool="read_media_file", outcome="ok") == 1
