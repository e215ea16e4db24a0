"""One kernel route (``KRoute``), and its target net and gateway NID as the kernel reads them.

Net names and NIDs are checked by ``lnetgen.nodes``; the kernel spellings it does not take
(leading zeros in IPv4 octets, hexadecimal numeric addresses) are normalised here first.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from lnetgen.nodes import Net, Nid, parse_net, parse_nid
from lnetgen.routestr.kernel import DIGITS, U32_MAX

_IPV4_LOOSE = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)")
_LOOPBACK = re.compile(r"lo[0-9]*")
_HEX = re.compile(r"0[xX]([0-9a-fA-F]+)")


@dataclass(frozen=True, order=True)
class KRoute:
    """One route as the kernel installs it: ``net`` via single ``gateway`` NID (canonical)."""

    net: str
    gateway: str
    hop: int = -1  # -1: omitted (LNET_UNDEFINED_HOPS)
    priority: int = 0  # 0 is the most preferred

    @classmethod
    def make(cls, net: str, gateway: str, hop: int = -1, priority: int = 0) -> KRoute:
        """Canonicalise and check a route; raises ``ValueError`` naming the problem."""
        target = route_net(net)
        gw = check_gateway(kernel_nid(gateway), target)
        check_hop_priority(hop, priority)
        return cls(str(target), str(gw), hop, priority)


@functools.lru_cache(maxsize=1 << 16)
def route_net(text: str) -> Net:
    """A route's target net (never the loopback net); raises ``ValueError``."""
    if not text.isascii():
        raise ValueError(f"{text!r} is not an LNet network name")
    if _LOOPBACK.fullmatch(text):
        raise ValueError(f"{text!r}: the loopback net cannot be a route target")
    return parse_net(text)


@functools.lru_cache(maxsize=1 << 16)
def kernel_nid(text: str) -> Nid:
    """A single NID as ``libcfs_strnid`` reads it (no ``@`` means ``@tcp``)."""
    if not text.isascii():
        raise ValueError(f"{text!r} is not a NID")
    addr, at, netstr = text.partition("@")
    if not at:
        netstr = "tcp"
    if _LOOPBACK.fullmatch(netstr):
        raise ValueError(f"{text!r} is on the loopback net")
    net = parse_net(netstr)
    if net.ip_based:
        m = _IPV4_LOOSE.fullmatch(addr)
        if m and all(int(g) <= 255 for g in m.groups()):
            addr = ".".join(str(int(g)) for g in m.groups())  # the kernel allows leading zeros
    else:
        h = _HEX.fullmatch(addr)
        if h:
            addr = str(int(h.group(1), 16))
        elif DIGITS.fullmatch(addr):
            addr = str(int(addr))
        if DIGITS.fullmatch(addr) and int(addr) > U32_MAX:
            raise ValueError(f"{text!r}: address exceeds {U32_MAX}")
    return parse_nid(f"{addr}@{net}")


def check_gateway(nid: Nid, target: Net) -> Nid:
    """``nid``, unless it is on ``target`` itself (then ``ValueError``)."""
    if nid.net == target:
        raise ValueError(f"gateway {nid} is on the target net {target} itself")
    return nid


def check_hop_priority(hop: int, priority: int) -> None:
    """Raise ``ValueError`` for a hop count or priority the kernel does not take."""
    if hop != -1 and not 1 <= hop <= 255:
        raise ValueError(f"hop count {hop} is outside 1-255 (or -1 for 'not given')")
    if not 0 <= priority <= U32_MAX:
        raise ValueError(f"priority {priority} is outside 0-{U32_MAX}")
