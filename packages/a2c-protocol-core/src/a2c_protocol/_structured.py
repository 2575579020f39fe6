"""Binary data that ``structuredContent`` duplicates from a content item (our extension).

MCP servers with an output schema often return the same base64 twice: once in a binary
content item (``image``/``audio`` ``data``, ``resource.blob``) and once inside
``structuredContent`` (the reference filesystem server's ``read_media_file``, FastMCP tools
annotated to return ``ImageContent``). The content item travels by blob handle (spec delta
§5.8); the copy in ``structuredContent`` would not, and one large image makes the whole
answer exceed the message limit.

Rules:

* the producer (Computer) empties every string in ``structuredContent`` that is exactly the
  base64 carrier of a content item it moved out of band to ``""`` (the output schema's
  ``string`` type still holds), and lists each place in the result-level marker
  ``meta.a2c_structured_refs``: ``[{"path": "/content/0/data", "content_index": 0}]``
  (``path`` is an RFC 6901 JSON pointer into ``structuredContent``);
* the consumer (Agent), after restoring the content items' bytes, puts each restored
  carrier back at its path and drops the marker; a reference to an item that was not
  restored (or a path that no longer leads to a string) is left as it is, marker included;
* peers that do not know the marker see ``""`` there, the same degradation as an item
  whose handle they do not pull. Everything here is pure and never mutates its input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from ._markers import blob_sideband_of
from ._models import CallToolResult, JsonObject

__all__ = ["A2C_STRUCTURED_REFS", "detach_structured_duplicates", "restore_structured_refs"]

#: Result-level ``meta`` key listing the ``structuredContent`` strings that were emptied.
A2C_STRUCTURED_REFS: Final = "a2c_structured_refs"


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _carrier_text(item: Mapping[str, Any]) -> str | None:
    kind = item.get("type")
    if kind in ("image", "audio"):
        value = item.get("data")
    else:
        resource = item.get("resource")
        value = resource.get("blob") if isinstance(resource, Mapping) else None
    return value if isinstance(value, str) else None


def _detach(value: Any, path: str, texts: Mapping[str, int], refs: list[JsonObject]) -> Any:
    if isinstance(value, str):
        index = texts.get(value)
        if index is None:
            return value
        refs.append({"path": path, "content_index": index})
        return ""
    if isinstance(value, dict):
        changed = {
            k: _detach(v, f"{path}/{_escape(str(k))}", texts, refs) for k, v in value.items()
        }
        return changed if any(changed[k] is not value[k] for k in value) else value
    if isinstance(value, list):
        items = [_detach(v, f"{path}/{i}", texts, refs) for i, v in enumerate(value)]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def detach_structured_duplicates(before: CallToolResult, after: CallToolResult) -> CallToolResult:
    """``after`` with ``structuredContent`` copies of moved bytes replaced by references.

    ``before`` is the result as the MCP server returned it, ``after`` the same result once
    its large binary items moved out of band (same content order). Only non-empty carriers
    of items that gained a blob handle count as duplicates.
    """
    structured = after.structured_content
    if structured is None:
        return after
    texts: dict[str, int] = {}
    for index, (old, new) in enumerate(zip(before.content, after.content, strict=True)):
        if old is new or blob_sideband_of(new) is None:
            continue
        text = _carrier_text(old)
        if text:
            texts.setdefault(text, index)
    if not texts:
        return after
    refs: list[JsonObject] = []
    detached = _detach(structured, "", texts, refs)
    if not refs:
        return after
    meta = dict(after.meta or {})
    meta[A2C_STRUCTURED_REFS] = refs
    return attrs.evolve(after, structured_content=detached, meta=meta)


def _put(root: Any, tokens: list[str], text: str) -> Any | None:
    """A copy of ``root`` with the string at ``tokens`` set to ``text``; None if no string."""
    if not tokens:
        return text if isinstance(root, str) else None
    key, rest = _unescape(tokens[0]), tokens[1:]
    if isinstance(root, dict) and key in root:
        inner = _put(root[key], rest, text)
        return None if inner is None else {**root, key: inner}
    if isinstance(root, list) and key.isdigit() and int(key) < len(root):
        inner = _put(root[int(key)], rest, text)
        if inner is None:
            return None
        out = list(root)
        out[int(key)] = inner
        return out
    return None


def _tokens(path: object) -> list[str] | None:
    if path == "":
        return []
    if not isinstance(path, str) or not path.startswith("/"):
        return None
    return path[1:].split("/")


def restore_structured_refs(result: CallToolResult) -> CallToolResult:
    """``result`` with each ``a2c_structured_refs`` place refilled from its restored item."""
    meta = result.meta or {}
    refs = meta.get(A2C_STRUCTURED_REFS)
    structured = result.structured_content
    if not isinstance(refs, list) or structured is None:
        return result
    left: list[Any] = []
    for ref in refs:
        index = ref.get("content_index") if isinstance(ref, Mapping) else None
        path = ref.get("path") if isinstance(ref, Mapping) else None
        item = (
            result.content[index]
            if isinstance(index, int) and not isinstance(index, bool)
            and 0 <= index < len(result.content) else None
        )  # fmt: skip
        text = _carrier_text(item) if isinstance(item, Mapping) else None
        tokens = _tokens(path)
        updated = _put(structured, tokens, text) if text and tokens is not None else None
        if updated is None:
            left.append(ref)
            continue
        structured = updated
    new_meta = {k: v for k, v in meta.items() if k != A2C_STRUCTURED_REFS}
    if left:
        new_meta[A2C_STRUCTURED_REFS] = left
    return attrs.evolve(result, structured_content=structured, meta=new_meta or None)
