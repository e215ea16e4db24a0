"""The ``route:`` section of an lnetctl dump read straight into a ``RouteTable``.

A route table is most of a large dump (``lnetctl export`` of a nearest-neighbor client: 192
entries of six lines; a router's ``route show -v``: thousands), and reading it through the
generic tree (one mapping and its line table per entry) held 25-30 times the text in memory.
Plain entries -- ``net``, ``gateway``, ``hop``, ``priority``, optionally ``state`` and
``type``, each a bare token, in that order and layout as lnetctl prints them -- are matched on
the bytes and added to the table directly.  Anything else (a bracket range, a quoted or null
value, a comment, another key or order, a value the checks refuse) returns None, and the
generic reader handles the section and words any error with its line; ``tests/
test_live_fast_routes.py`` checks both give the same table.
"""

from __future__ import annotations

import re

from lnetgen.live.errors import EntryError
from lnetgen.live.normalize import RouteRows, canonical_nid, check_hop_priority, route_net
from lnetgen.live.state import RouteTable

_ENTRY = re.compile(
    rb"    - net: ([A-Za-z0-9_.@:-]+)\n"
    rb"      gateway: ([A-Za-z0-9_.@:-]+)\n"
    rb"      hop: (-?[0-9]{1,10})\n"
    rb"      priority: ([0-9]{1,10})\n"
    rb"(?:      state: ([A-Za-z]+)\n)?"
    rb"(?:      type: ([A-Za-z-]+)\n)?"
)
_NULLS = frozenset((b"null", b"Null", b"NULL", b"~"))


def route_table(chunk: bytes) -> RouteTable | None:
    """The table of a ``route:`` section (``chunk`` starts with ``route:\\n``), or None when
    the section is not made of plain entries only."""
    if not chunk.startswith(b"route:\n") or not chunk.endswith(b"\n"):
        return None
    rows = RouteRows()
    pos, end = 7, len(chunk)
    shows_state = False
    match = _ENTRY.match
    try:
        while pos < end:
            m = match(chunk, pos)
            if m is None:
                return None
            net_b, gw_b, hop_b, prio_b, state_b, type_b = m.groups()
            if net_b in _NULLS or gw_b in _NULLS:
                return None
            hop, prio = int(hop_b), int(prio_b)
            check_hop_priority(hop, prio, 0, 0)
            net = route_net(net_b.decode("ascii"), 0)
            gw = canonical_nid(gw_b.decode("ascii"), 0, "gateway")
            shows_state = shows_state or state_b is not None or type_b is not None
            if rows.add(net, gw, hop, prio) and state_b is not None and state_b.lower() == b"down":
                rows.mark_down(gw, net)
            pos = m.end()
    except (EntryError, ValueError):
        return None
    if pos == 7:
        return None
    return rows.table(True, shows_state)
