"""Skill packages on disk and a loopback HTTP server for ``archive``-mode skills (tests).

``write_package`` writes a package directory; ``tar_gz`` packs one; ``serving`` runs a
real HTTP server on 127.0.0.1 that serves given bytes by path, and, for ``huge`` paths, a
stream of zero bytes of the declared size generated on the fly (nothing is written to disk;
a client that stops reading ends it).
"""

from __future__ import annotations

import contextlib
import http.server
import io
import tarfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = ["serving", "tar_gz", "write_package"]


def write_package(
    folder: Path,
    name: str,
    description: str = "A test skill.",
    *,
    files: Mapping[str, bytes] | None = None,
    front: str | None = None,
) -> Path:
    """``folder/name/SKILL.md`` (frontmatter ``front``, default name + description) plus
    ``files`` (relative path -> bytes); returns the package root."""
    root = folder / name
    root.mkdir(parents=True, exist_ok=True)
    head = front if front is not None else f"name: {name}\ndescription: {description}"
    (root / "SKILL.md").write_text(f"---\n{head}\n---\n# {name}\n", encoding="utf-8")
    for rel, data in (files or {}).items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def tar_gz(root: Path) -> bytes:
    """A tar.gz of ``root`` with the package in one top-level directory."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(root, arcname=root.name)
    return buffer.getvalue()


@contextlib.contextmanager
def serving(files: Mapping[str, bytes], huge: Mapping[str, int] | None = None) -> Iterator[str]:
    """A loopback HTTP server; yields its base URL (``http://127.0.0.1:PORT``)."""
    streams = dict(huge or {})

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.lstrip("/")
            if path in files:
                data = files[path]
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            if path in streams:
                self.send_response(200)
                self.send_header("Content-Length", str(streams[path]))
                self.end_headers()
                block = bytes(1024 * 1024)
                left = streams[path]
                with contextlib.suppress(OSError):
                    while left > 0:
                        piece = block[: min(left, len(block))]
                        self.wfile.write(piece)
                        left -= len(piece)
                return
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
