"""The ``route:`` section of an lnetctl dump read straight into a ``RouteTable``.

A route table is most of a large dump (``lnetctl export`` of a nearest-neighbor client: 192
entries of six lines; a router's ``route show -v``: thousands), and reading it through the
generic tree (one mapping and its line table per entry) held 25-30 times the text in memory.
Plain entries -- ``net``, ``gateway``, ``hop``, ``priority``, optionally ``state`` and
``type``, each a bare token, in that order and layout as lnetctl prints them -- are matched on
the bytes and added to the table directly, column by column: each distinct net, gateway and
hop/priority is checked once, and remembered for the next tables.  Anything else (a bracket
range, a quoted or null value, a comment, another key or order, a value the checks refuse)
returns None, and the generic reader handles the section and words any error with its line;
``tests/test_live_fast_routes.py`` checks both give the same table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from lnetgen.live.errors import EntryError
from lnetgen.live.normalize import RouteRows, canonical_nid, check_hop_priority, route_net
from lnetgen.live.state import RouteTable

_ENTRY_TEXT = (
    rb"    - net: ([A-Za-z0-9_.@:-]+)\n"
    rb"      gateway: ([A-Za-z0-9_.@:-]+)\n"
    rb"      hop: (-?[0-9]{1,10})\n"
    rb"      priority: ([0-9]{1,10})\n"
    rb"(?:      state: ([A-Za-z]+)\n)?"
    rb"(?:      type: ([A-Za-z-]+)\n)?"
)
_ENTRY = re.compile(_ENTRY_TEXT)
_NULLS = frozenset((b"null", b"Null", b"NULL", b"~"))
#: The text of an entry besides its values, without and with the optional lines.
_ENTRY_FIXED = len(b"    - net: \n      gateway: \n      hop: \n      priority: \n")
_STATE_FIXED = len(b"      state: \n")
_TYPE_FIXED = len(b"      type: \n")

#: The canonical net, gateway and (hop, priority) of the bytes read: a tree's tables repeat a
#: few hundred of them.  Values the checks refuse are not kept.  Cleared when one is full.
_MEMO_MAX = 1 << 16
K = TypeVar("K")
V = TypeVar("V")
_nets: dict[bytes, str] = {}
_gateways: dict[bytes, str] = {}
_hop_prios: dict[tuple[bytes, bytes], tuple[int, int]] = {}


def _route_net(raw: bytes) -> str:
    if raw in _NULLS:
        raise ValueError("null")
    return route_net(raw.decode("ascii"), 0)


def _gateway(raw: bytes) -> str:
    if raw in _NULLS:
        raise ValueError("null")
    return canonical_nid(raw.decode("ascii"), 0, "gateway")


def _hop_prio(raw: tuple[bytes, bytes]) -> tuple[int, int]:
    hop, prio = int(raw[0]), int(raw[1])
    check_hop_priority(hop, prio, 0, 0)
    return (hop, prio)


def _column(column: Sequence[K], memo: dict[K, V], make: Callable[[K], V]) -> list[V] | None:
    """``make`` of each value of ``column``, each distinct one made once through ``memo``;
    None when ``make`` refuses one (raises ``EntryError`` or ``ValueError``)."""
    missing = set(column).difference(memo)
    if len(memo) + len(missing) > _MEMO_MAX:
        memo.clear()
        missing = set(column)
    try:
        for raw in missing:
            memo[raw] = make(raw)
    except (EntryError, ValueError):
        return None
    return list(map(memo.__getitem__, column))


def route_table(chunk: bytes) -> RouteTable | None:
    """The table of a ``route:`` section (``chunk`` starts with ``route:\\n``), or None when
    the section is not made of plain entries only."""
    if not chunk.startswith(b"route:\n") or not chunk.endswith(b"\n"):
        return None
    found = _ENTRY.findall(chunk, 7)
    if not found:
        return None
    nets_b, gws_b, hops_b, prios_b, states_b, types_b = zip(*found, strict=True)
    # the entries found do not overlap: they are the whole section when their lengths add up
    # to its length (a group that did not match is b"", as each matches a character at least)
    states = [s for s in states_b if s]
    types = [t for t in types_b if t]
    size = (
        _ENTRY_FIXED * len(found)
        + _STATE_FIXED * len(states)
        + _TYPE_FIXED * len(types)
        + sum(map(len, nets_b))
        + sum(map(len, gws_b))
        + sum(map(len, hops_b))
        + sum(map(len, prios_b))
        + sum(map(len, states))
        + sum(map(len, types))
    )
    if size != len(chunk) - 7:
        return None
    # column by column: each distinct value is checked once
    nets = _column(nets_b, _nets, _route_net)
    gws = _column(gws_b, _gateways, _gateway)
    hop_prios = _column(list(zip(hops_b, prios_b, strict=True)), _hop_prios, _hop_prio)
    if nets is None or gws is None or hop_prios is None:
        return None
    rows = RouteRows()
    rows.routes = dict(zip(zip(nets, gws, strict=True), hop_prios, strict=True))
    if len(rows.routes) < len(found) or states:
        # a (net, gateway) listed twice (the first one wins, the others are a health note)
        # or the state of a route shown: entry by entry
        rows = RouteRows()
        for net, gw, (hop, prio), state in zip(nets, gws, hop_prios, states_b, strict=True):
            if rows.add(net, gw, hop, prio) and state.lower() == b"down":
                rows.mark_down(gw, net)
    return rows.table(True, bool(states or types))
