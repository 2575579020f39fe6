"""Who may be sent ``client:put_blob`` (protocol 0.4's upload; an extension in 0.2 offices).

Rules:

* U0 a session speaks uploads when it speaks protocol 0.4 or newer, or when a 0.2 session
  listed ``put_blob`` in its connect ``auth.a2c_extensions`` (docs/compatibility.md);
* U1 an Agent that does not speak uploads sending one is refused 4019 ``forbidden``;
* U2 an upload to a Computer that does not speak uploads is refused 4019 ``forbidden`` at
  once: it never reaches that Computer (which would not answer, or answer as for an
  unknown event).

Everything else about an upload (office isolation R1-R4, the message size limit, the ack
that paces the next chunk) is the relay of every ``client:*`` request.
"""

from __future__ import annotations

from typing import Final

from a2c_protocol import PUT_BLOB_EXTENSION, BlobWriteReason, ErrorCode, ProtocolVersion

from ._rules import Member, Refusal

__all__ = ["KNOWN_EXTENSIONS", "announced_extensions", "speaks_uploads", "upload_refusal"]

#: The extension names a session may announce; anything else is ignored.
KNOWN_EXTENSIONS: Final = frozenset({PUT_BLOB_EXTENSION})
_FIRST_LINE_WITH_UPLOADS: Final = (0, 4)


def announced_extensions(auth: object) -> frozenset[str]:
    """The known extension names in a connect ``auth`` object (``a2c_extensions``)."""
    listed = auth.get("a2c_extensions") if isinstance(auth, dict) else None
    if not isinstance(listed, list | tuple):
        return frozenset()
    return KNOWN_EXTENSIONS.intersection(x for x in listed if isinstance(x, str))


def speaks_uploads(member: Member) -> bool:
    """U0."""
    if PUT_BLOB_EXTENSION in member.extensions:
        return True
    try:
        version = ProtocolVersion.parse(member.a2c_version)
    except ValueError:
        return False
    return (version.major, version.minor) >= _FIRST_LINE_WITH_UPLOADS


def upload_refusal(sender: Member, target: Member) -> Refusal | None:
    """U1 and U2 for a route R1-R4 already allowed."""
    if not speaks_uploads(sender):
        return _forbidden(
            "this session did not announce client:put_blob (protocol 0.4, or the put_blob "
            "extension in auth.a2c_extensions)"
        )
    if not speaks_uploads(target):
        return _forbidden(f"Computer {target.name!r} does not take uploads (client:put_blob)",
                          target.name)  # fmt: skip
    return None


def _forbidden(message: str, computer: str | None = None) -> Refusal:
    details = {"reason": BlobWriteReason.FORBIDDEN.value}
    if computer is not None:
        details["computer_name"] = computer
    return Refusal(code=ErrorCode.BLOB_WRITE_FAILED, message=message, details=details)
