"""Size limits on what clients send (pure functions, no I/O).

The protocol leaves identifier strings (``req_id``, names, office ids…) unbounded, and the
Server relays some of them to whole offices; a 500 KB ``req_id`` is cheap to send and
expensive to fan out. Nesting depth is bounded too, because a deeply nested payload that
the JSON decoder still accepts can fail later, when the Server encodes it to forward.
"""

from __future__ import annotations

from typing import Any, Final

from a2c_protocol import FieldError

__all__ = ["DEFAULT_MAX_ID_LENGTH", "ID_FIELDS", "MAX_NESTING", "payload_problems"]

#: Default longest identifier string (characters).
DEFAULT_MAX_ID_LENGTH: Final = 256
#: Deepest nesting of lists/objects accepted in one payload.
MAX_NESTING: Final = 64
#: Top-level payload fields that carry identifiers and are bounded by ``max_id_length``.
ID_FIELDS: Final = frozenset(
    {"req_id", "agent", "computer", "name", "office_id", "tool_name", "mcp_server", "role"}
)
_ID_ORDER: Final = tuple(sorted(ID_FIELDS))  # problems are reported in a stable order
_CONTAINERS: Final = (dict, list, tuple)


def _depth_exceeds(value: Any, limit: int) -> bool:
    # Iterative, one level at a time: the point is to survive inputs that would blow a
    # recursive walk, and a level list costs less per container than a (node, depth) stack.
    level = [value] if isinstance(value, _CONTAINERS) else []
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            # Scalars cannot nest: only containers go on to the next level.
            children = item.values() if isinstance(item, dict) else item
            below += [child for child in children if isinstance(child, _CONTAINERS)]
        level = below
        depth += 1
    return False


def payload_problems(
    args: list[Any], *, max_id_length: int, text: str | None = None
) -> list[FieldError]:
    """What makes an event's arguments too big to handle (empty: fine).

    ``args`` are the Socket.IO arguments after the event name. ``text``, when given, is the
    JSON text they were decoded from: a decoded value nests no deeper than the text has
    opening brackets, and holds no string longer than the text, so two counts and a length
    (in C) settle most packets without walking them (the walk cost ~10x the routing check).
    """
    problems: list[FieldError] = []
    deep = long = True
    if text is not None:
        deep = text.count("[") + text.count("{") > MAX_NESTING + 1
        long = len(text) > max_id_length
    if deep and _depth_exceeds(args, MAX_NESTING + 1):
        problems.append(FieldError("$", f"nesting deeper than {MAX_NESTING} levels"))
        return problems
    payload = args[0] if len(args) == 1 else None
    if long and isinstance(payload, dict):
        for key in _ID_ORDER:
            value = payload.get(key)
            if isinstance(value, str) and len(value) > max_id_length:
                problems.append(FieldError(f"$.{key}", f"longer than {max_id_length} characters"))
    return problems
