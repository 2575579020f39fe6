"""v0.2 conformance lint of window resources, for ``a2c-computer check`` (seed §5.1).

Rules (each finding names the server and URI):

* ``query``: the URI carries a query or fragment (v0.1 metadata style);
* ``priority``: ``annotations.priority`` is not a number in [0, 1] (an integer-style value
  such as ``80`` is called out as a v0.1 leftover);
* ``fullscreen``: ``_meta.fullscreen`` is present and not a boolean;
* ``audience``: ``annotations.audience`` is missing, or lacks ``"assistant"``;
* ``host``: the host is not reverse-DNS style (lowercase, dotted);
* ``host-collision``: a window host is used by more than one MCP server.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ._desktop import host_collisions, is_reverse_dns

__all__ = ["LintFinding", "lint_windows"]


@attrs.frozen
class LintFinding:
    server: str
    uri: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.server}: {self.uri}: {self.message}"


def _priority_problem(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"priority must be a number in [0, 1], got {value!r}"
    if not math.isfinite(value) or not 0 <= value <= 1:
        if 1 < value <= 100 and float(value).is_integer():
            return f"priority {value!r} looks like a v0.1 integer priority; use a float in [0, 1]"
        return f"priority must be in [0, 1], got {value!r}"
    return None


def lint_windows(
    resources_by_server: Mapping[str, Sequence[Mapping[str, Any]]],
) -> list[LintFinding]:
    """Every conformance problem of the ``window://`` resources of each server."""
    findings: list[LintFinding] = []
    hosts: dict[str, set[str]] = {}
    for server in sorted(resources_by_server):
        for resource in resources_by_server[server]:
            uri = resource.get("uri")
            if not isinstance(uri, str) or not uri.startswith("window://"):
                continue
            rest = uri[len("window://") :]
            if "?" in rest or "#" in rest:
                findings.append(
                    LintFinding(
                        server,
                        uri,
                        "query",
                        "window URIs must not carry a query or "
                        "fragment; move metadata to annotations / _meta",
                    )
                )
            host = rest.split("?", 1)[0].split("#", 1)[0].split("/", 1)[0]
            if host:
                hosts.setdefault(server, set()).add(host)
                if not is_reverse_dns(host):
                    findings.append(
                        LintFinding(
                            server,
                            uri,
                            "host",
                            f"host {host!r} is not reverse-DNS style (e.g. org.example.editor)",
                        )
                    )
            annotations = resource.get("annotations")
            annotations = annotations if isinstance(annotations, Mapping) else {}
            problem = _priority_problem(annotations.get("priority"))
            if problem:
                findings.append(LintFinding(server, uri, "priority", problem))
            audience = annotations.get("audience")
            if audience is None:
                findings.append(
                    LintFinding(
                        server,
                        uri,
                        "audience",
                        'annotations.audience is missing; declare ["assistant"]',
                    )
                )
            elif not isinstance(audience, list) or "assistant" not in audience:
                findings.append(
                    LintFinding(server, uri, "audience", f"audience {audience!r} lacks 'assistant'")
                )
            meta = resource.get("_meta")
            if (
                isinstance(meta, Mapping)
                and meta.get("fullscreen") is not None
                and not isinstance(meta.get("fullscreen"), bool)
            ):
                findings.append(
                    LintFinding(server, uri, "fullscreen", "_meta.fullscreen must be a boolean")
                )
    for host, servers in host_collisions(hosts).items():
        findings.append(
            LintFinding(
                ", ".join(servers),
                f"window://{host}",
                "host-collision",
                f"host {host!r} is used by several MCP servers: {', '.join(servers)}",
            )
        )
    return findings
