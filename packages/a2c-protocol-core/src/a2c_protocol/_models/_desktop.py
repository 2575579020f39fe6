"""What a Computer shows besides tools: its desktop (windows) and MCP resources."""

from __future__ import annotations

import attrs

from ._fields import JsonObject, _opt

__all__ = ["A2CResource", "GetDeskTopReq", "GetDeskTopRet", "GetResourcesReq", "GetResourcesRet"]


# ---------------------------------------------------------------------- desktop


@attrs.frozen(kw_only=True)
class GetDeskTopReq:
    agent: str
    req_id: str
    computer: str
    desktop_size: int | None = _opt()
    window: str | None = _opt()


@attrs.frozen(kw_only=True)
class GetDeskTopRet:
    desktops: list[str]
    req_id: str


# -------------------------------------------------------------------- resources


@attrs.frozen(kw_only=True)
class GetResourcesReq:
    agent: str
    req_id: str
    computer: str
    mcp_server: str
    cursor: str | None = _opt()


@attrs.frozen(kw_only=True)
class GetResourcesRet:
    """One page of MCP ``resources/list``; ``resources`` are MCP JSON objects, unchanged."""

    resources: list[JsonObject]
    req_id: str
    next_cursor: str | None = _opt()


@attrs.frozen(kw_only=True)
class A2CResource:
    """Typed view of an MCP ``Resource`` (any scheme).

    On the wire it keeps MCP's spelling (``mimeType``, ``_meta``); ``mime_type`` is
    accepted on input too.
    """

    uri: str
    name: str | None = _opt()
    title: str | None = _opt()
    description: str | None = _opt()
    mime_type: str | None = _opt(metadata={"wire": "mimeType"})
    size: int | None = _opt()
    annotations: JsonObject | None = _opt()
    meta: JsonObject | None = _opt(metadata={"wire": "_meta"})
