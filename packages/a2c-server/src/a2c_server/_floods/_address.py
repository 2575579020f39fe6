"""The share a client address counts in, for every per-address limit.

Rules (pure, one function for all of them: handshake pacing, the cap on unadmitted
sessions, the per-address subject cap):

* an IPv4 address is its own share;
* an IPv4 address wrapped in IPv6 is that IPv4 address: IPv4-mapped ``::ffff:a.b.c.d``
  (what a dual-stack bind, ``--host ::``, reports for every IPv4 client) and the NAT64
  well-known prefix ``64:ff9b::/96``. Keyed as IPv6 they all fell in ``::/64`` or
  ``64:ff9b::/64``: every IPv4 client shared one share, and one flooder made the others
  wait or be refused;
* any other IPv6 address counts per /64 (what one host or site is given);
* anything else (a Unix socket, ``?``) is its own share.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Final

__all__ = ["address_key"]

_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


@lru_cache(maxsize=4096)
def address_key(address: str) -> str:
    """The share ``address`` (a bare host, IPv6 without brackets) counts in."""
    if ":" not in address:
        return address
    try:
        ip = ipaddress.IPv6Address(address.strip("[]"))
    except ValueError:
        return address
    mapped = ip.ipv4_mapped
    if mapped is not None:
        return str(mapped)
    if ip in _NAT64:
        return str(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return str(ipaddress.IPv6Network((ip, 64), strict=False))
