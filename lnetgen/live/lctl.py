"""Reading the route tables lctl prints: ``lctl get_param -n routes`` (``Routing enabled``, a
header, then one row per route) and ``lctl show_route`` (``net N hops H gw G up|down pri P``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from lnetgen.live.errors import EntryError
from lnetgen.live.normalize import RouteRows, canonical_nid, check_hop_priority, integer, route_net
from lnetgen.live.state import LCTL_ROUTES, LCTL_SHOW_ROUTE, NO_PEERS, HostState

_ROUTING_LINE = re.compile(r"Routing\s+(enabled|disabled|starting|stopping|unknown)\s*$")
#: The first line of an ``lctl show_route`` dump.
SHOW_ROUTE = re.compile(r"net\s+\S+\s+hops\s+-?\d+\s+gw\s")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    for n, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if s:
            yield n, s


def _add_row(
    rows: RouteRows, net: str, hop: str, prio: str, gw: str, state: str, line: int
) -> None:
    """One row of an lctl table into ``rows``."""
    h = integer(hop, line, "hops")
    p = integer(prio, line, "priority")
    check_hop_priority(h, p, line, line)
    n, g = route_net(net, line), canonical_nid(gw, line, "gateway")
    rows.add(n, g, h, p)
    if state.lower() == "down":  # a repeated row still tells the gateway's state
        rows.mark_down(g, n)


def parse_lctl_routes(text: str) -> HostState:
    """``lctl get_param -n routes``: ``Routing X``, a header, then rows."""
    routing: bool | None = None
    health: list[str] = []
    rows = RouteRows()
    columns: list[str] | None = None
    seen_routing = False
    for n, s in _lines(text):
        if not seen_routing:
            if s.startswith("routes="):
                s = s[len("routes=") :].strip()
                if not s:
                    continue
            m = _ROUTING_LINE.match(s)
            if not m:
                raise EntryError(
                    n, f"expected 'Routing enabled' or 'Routing disabled', got {s[:40]!r}"
                )
            word = m.group(1)
            routing = {"enabled": True, "disabled": False, "starting": True, "stopping": False}.get(
                word
            )
            if word in ("starting", "stopping", "unknown"):
                health.append(
                    f"routing is {word}"
                    + (" (drained with `lnetctl set routing 0`)" if word == "stopping" else "")
                )
            seen_routing = True
            continue
        fields = s.split()
        if columns is None:
            if fields[0] != "net":
                raise EntryError(
                    n, f"expected the header 'net hops priority state router', got {s[:40]!r}"
                )
            columns = fields
            if columns not in (
                ["net", "hops", "priority", "state", "router"],
                ["net", "hops", "state", "router"],
            ):
                raise EntryError(n, f"unknown header {s!r}")
            continue
        if len(fields) != len(columns):
            raise EntryError(
                n,
                f"expected {len(columns)} columns ({' '.join(columns)}), got "
                f"{len(fields)}: {s[:60]!r}",
            )
        row = dict(zip(columns, fields, strict=True))
        _add_row(
            rows, row["net"], row["hops"], row.get("priority", "0"), row["router"], row["state"], n
        )
    if not seen_routing:
        raise EntryError(0, "the dump is empty")
    return HostState(None, rows.table(), routing, NO_PEERS, tuple(health), (), (LCTL_ROUTES,))


def parse_show_route(text: str) -> HostState:
    """``lctl show_route``: ``net N hops H gw G up|down pri P`` per line."""
    rows = RouteRows()
    for n, s in _lines(text):
        f = s.split()
        if len(f) != 9 or (f[0], f[2], f[4], f[7]) != ("net", "hops", "gw", "pri"):
            raise EntryError(n, f"expected 'net N hops H gw G up|down pri P', got {s[:60]!r}")
        _add_row(rows, f[1], f[3], f[8], f[5], f[6], n)
    return HostState(None, rows.table(), None, NO_PEERS, (), (), (LCTL_SHOW_ROUTE,))
