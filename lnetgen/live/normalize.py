"""Normalization every live reader applies to the values it reads (lnet-formats reference §4).

Canonical net names (``o2ib0`` is ``o2ib``; the loopback net is no route target), canonical
NIDs, gateway ranges expanded to single NIDs, hop counts and priorities checked (a missing
``hop`` is ``UNDEFINED_HOP``, a missing ``priority`` 0), and the health notes a route table
carries (routes without a hop count, gateways that are down, entries listed twice).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from lnetgen import nodes, routestr
from lnetgen.live.errors import EntryError
from lnetgen.live.state import UNDEFINED_HOP, RouteKey, RouteTable

LOOPBACK = re.compile(r"lo[0-9]*")


#: An integer as lnetctl, lctl and the kernel write one: ASCII digits only (Python's ``int``
#: also takes ``1_0``, fullwidth and Arabic-Indic digits, which no LNet tool reads as numbers).
_INTEGER = re.compile(r"[+-]?[0-9]+")
#: Most digits read: more cannot be a hop, priority or tunable (and ``int`` refuses 4,300).
MAX_DIGITS = 40


def integer(value: Any, line: int, what: str) -> int:
    """``value`` read as an integer; ``what`` names it in the error."""
    text = str(value).strip()
    if _INTEGER.fullmatch(text) is None:
        raise EntryError(line, f"{what} {value!r} is not an integer")
    if len(text) > MAX_DIGITS:
        raise EntryError(line, f"{what} has {len(text)} digits, more than {MAX_DIGITS}")
    return int(text)


def canonical_nid(text: str, line: int, what: str) -> str:
    """The canonical form of the NID ``text`` (``10.0.0.1@o2ib0`` -> ``10.0.0.1@o2ib``)."""
    try:
        return _canonical(text.strip())
    except nodes.NodeSyntaxError as exc:
        raise EntryError(line, f"bad {what}: {exc}") from None


@functools.lru_cache(maxsize=1 << 16)
def _canonical(text: str) -> str:
    """``canonical_nid`` without the location: the same gateways recur in every route table
    of a tree (a bounded cache; errors are not cached)."""
    return str(nodes.parse_nid(text))


def route_net(text: str, line: int) -> str:
    """The canonical name of a route's target net; the loopback net is refused."""
    t = text.strip()
    if LOOPBACK.fullmatch(t):
        raise EntryError(line, f"route to the loopback net {t!r}")
    try:
        return _canonical_net(t)
    except nodes.NodeSyntaxError as exc:
        raise EntryError(line, f"bad route net: {exc}") from None


@functools.lru_cache(maxsize=1 << 14)
def _canonical_net(text: str) -> str:
    return nodes.canonical_net(text)


def check_hop_priority(hop: int, prio: int, hop_line: int, prio_line: int) -> None:
    """Refuse a hop count outside 1-255 (``UNDEFINED_HOP`` aside) or a priority outside
    32 bits."""
    if hop != UNDEFINED_HOP and not 1 <= hop <= 255:
        raise EntryError(hop_line, f"hop count {hop} is outside 1-255 (-1: not given)")
    if not 0 <= prio < 2**32:
        raise EntryError(prio_line, f"priority {prio} is outside 0-{2**32 - 1}")


def expand(token: str, line: int) -> list[str]:
    """A net or gateway with a bracket range (``10.0.0.[1-4]@o2ib``) as single names."""
    if "[" not in token:
        return [token]
    try:
        return routestr.expand_brackets(token.strip())
    except ValueError as exc:  # RouteSyntaxError is a ValueError
        raise EntryError(line, f"bad range {token!r}: {exc}") from None


def _route_order(key: RouteKey) -> tuple[object, ...]:
    net, gw = key
    addr, _, gnet = gw.rpartition("@")
    return (net, gnet, tuple(int(x) if x.isdigit() else 0 for x in addr.split(".")), gw)


def route_health(
    routes: Mapping[RouteKey, tuple[int, int]],
    down: Mapping[str, list[str]],
    detailed: bool,
    extra: Iterable[str] = (),
) -> tuple[str, ...]:
    """Health notes of a route table: ``extra`` first, then routes without a hop count (when
    the table is ``detailed``), then each gateway that is ``down`` with the nets it routes."""
    health: list[str] = list(extra)
    if detailed:
        undefined = sorted(
            (k for k, v in routes.items() if v[0] == UNDEFINED_HOP), key=_route_order
        )
        if undefined:
            net, gw = undefined[0]
            more = f" and {len(undefined) - 1} more" if len(undefined) > 1 else ""
            health.append(
                f"route to {net} via {gw}{more} has no hop count (-1); single-hop "
                "FGR routes need hop 1"
            )
    for gw in sorted(down, key=lambda g: _route_order(("", g))):
        health.append(f"gateway {gw} is down (routes to {', '.join(sorted(set(down[gw])))})")
    return tuple(health)


@functools.lru_cache(maxsize=1 << 10)
def _hop_priority(hop: int, prio: int) -> tuple[int, int]:
    """One shared tuple per (hop, priority): a route table of thousands has a handful."""
    return (hop, prio)


class RouteRows:
    """A route table being read entry by entry: the first entry of a (net, gateway) wins and
    a repeat becomes a health note, as do gateways shown down."""

    def __init__(self) -> None:
        self.routes: dict[RouteKey, tuple[int, int]] = {}
        self.down: dict[str, list[str]] = {}
        self.dups: list[str] = []

    def add(self, net: str, gw: str, hop: int, prio: int) -> bool:
        """Record a route; False (and a note) when (net, gw) was already listed."""
        if (net, gw) in self.routes:
            self.dups.append(f"route to {net} via {gw} listed twice")
            return False
        self.routes[(net, gw)] = _hop_priority(hop, prio)
        return True

    def mark_down(self, gw: str, net: str) -> None:
        """The dump shows the route to ``net`` via ``gw`` down."""
        self.down.setdefault(gw, []).append(net)

    def table(self, detailed: bool = True, shows_state: bool = False) -> RouteTable:
        """The routes read, with their health notes."""
        health = route_health(self.routes, self.down, detailed, self.dups)
        return RouteTable(self.routes, detailed, health, shows_state)
