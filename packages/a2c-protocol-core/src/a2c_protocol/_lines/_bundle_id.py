"""The 0.4 rule for a bundle_id given explicitly (a Computer's config). No I/O.

Rule (0.4, as the official 0.4.2 SDK checks it): an explicit ``bundle_id`` is a non-empty
string of ``A-Z a-z 0-9 _ -`` only, with no ``__`` anywhere (``__`` separates the bundle
from the tool in ``{bundle_id}__{tool}``). Case is kept and there is no length limit. An
omitted bundle_id is not an error: the Computer derives one from the server's name.
"""

from __future__ import annotations

import re
from typing import Final

from ._shapes import BUNDLE_SEPARATOR

__all__ = ["bundle_id_problem"]

_CHARSET: Final = re.compile(r"[A-Za-z0-9_-]+", re.ASCII)


def bundle_id_problem(bundle_id: object) -> str | None:
    """Why ``bundle_id`` is not a valid explicit bundle_id, or None when it is."""
    if not isinstance(bundle_id, str) or not bundle_id:
        return "must be a non-empty string (leave it out to derive it from the name)"
    if _CHARSET.fullmatch(bundle_id) is None:
        return f"{bundle_id!r} may only hold the characters A-Z a-z 0-9 _ -"
    if BUNDLE_SEPARATOR in bundle_id:
        return f"{bundle_id!r} must not contain '__' (it separates the bundle from the tool)"
    return None
