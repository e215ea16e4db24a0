"""Producing ``routes=``: one statement per (net, hop, priority), gateways folded, statements
split so that the kernel's text buffers hold them.

Linux caps a string module parameter at 1024 bytes (``param_set_charp``): the result may be
longer, callers check it with ``param_fits``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from lnetgen.nodes import Net, Nid
from lnetgen.routestr.fold import fold_gateways, fold_nets
from lnetgen.routestr.kernel import (
    TEXTBUF_BUDGET,
    TEXTBUF_HEADER,
    TEXTBUF_SINGLE_MAX,
    RouteBudgetError,
)
from lnetgen.routestr.kroute import KRoute, check_gateway, check_hop_priority, kernel_nid, route_net
from lnetgen.routestr.parse import parse_statement
from lnetgen.routestr.ranges import Budget


def _net_order(net: Net) -> tuple[int, str]:
    return (net.number, net.lnd)


def statement_order(net: str) -> tuple[int, str]:
    """Where the statements of routes to ``net`` stand in ``format_routes``'s output (before
    those of any net with a larger key): callers that format each net's routes once and join
    the texts sort them by this."""
    return _net_order(route_net(net))


def _sorted_gateways(gws: Iterable[Nid]) -> list[Nid]:
    return sorted(gws, key=lambda n: n.sort_key())


def _statements_for(
    net_tok: str, hop: int, priority: int, gws: Sequence[Nid], limit: int
) -> list[str]:
    """Statements for one (net, hop, priority) group; ``gws`` sorted.

    Split into consecutive chunks so that each statement's expanded gateways and token copies
    stay within ``limit`` bytes of kernel text buffers and its text within one buffer.
    """
    head = net_tok if hop == -1 else f"{net_tok} {hop}"
    suffix = f":{priority}" if priority else ""
    max_text = TEXTBUF_SINGLE_MAX - TEXTBUF_HEADER - 1 - 64
    costs = [Budget.cost(f"{n}{suffix}") for n in gws]
    chunks: list[Sequence[Nid]] = []
    start, acc = 0, 0
    for i, c in enumerate(costs):
        if i > start and acc + c > limit - 4096:  # leave room for the token copies
            chunks.append(gws[start:i])
            start, acc = i, 0
        acc += c
    chunks.append(gws[start:])
    out: list[str] = []
    while chunks:
        chunk = chunks.pop(0)
        tokens = [t + suffix for t in fold_gateways(str(n) for n in chunk)]
        stmt = " ".join([head, *tokens])
        cost = sum(Budget.cost(f"{n}{suffix}") for n in chunk)
        cost += sum(Budget.cost(t) for t in tokens)
        if (cost > limit or len(stmt) > max_text) and len(chunk) > 1:
            half = len(chunk) // 2
            chunks[:0] = [chunk[:half], chunk[half:]]
            continue
        out.append(stmt)
    return out


def format_routes(routes: Iterable[KRoute], *, merge_nets: bool = False) -> str:
    """The shortest reasonable ``routes=`` string for ``routes``.

    One statement per (net, hop, priority), gateways folded, ``:priority`` after every gateway
    token (omitted for 0), the hop written whenever it is not -1, statements joined by ``; ``
    and ordered by net number, priority, hop.  A statement that would exhaust the kernel's text
    buffers is split.  ``merge_nets`` also merges nets with identical gateway sets
    (``o2ib[1-2] 1 [10-13]@gni``).  ``parse_routes(format_routes(x)) == sorted(set(x))``.

    Routes are canonicalised; raises ``ValueError`` for a bad net, NID, hop or priority.
    The result may exceed ``MODULE_PARAM_MAX``: check with ``param_fits``.
    """
    groups: dict[tuple[Net, int, int], set[Nid]] = {}
    for r in routes:
        net = route_net(r.net)
        gw = check_gateway(kernel_nid(r.gateway), net)
        check_hop_priority(r.hop, r.priority)
        groups.setdefault((net, r.hop, r.priority), set()).add(gw)
    if not groups:
        return ""
    keyed: list[tuple[tuple[int, str, int, int, str, str], str, int, int, list[Nid]]] = []
    if merge_nets:
        by_gws: dict[tuple[int, int, frozenset[Nid]], list[Net]] = {}
        for (net, hop, prio), gws in groups.items():
            by_gws.setdefault((hop, prio, frozenset(gws)), []).append(net)
        for (hop, prio, gw_set), nets in by_gws.items():
            first = min(nets, key=_net_order)
            gw_sorted = _sorted_gateways(gw_set)
            gw_text = " ".join(str(n) for n in gw_sorted)
            for net_tok in fold_nets(str(n) for n in nets):
                key = (*_net_order(first), prio, hop, net_tok, gw_text)
                keyed.append((key, net_tok, hop, prio, gw_sorted))
    else:
        for (net, hop, prio), gws in groups.items():
            key = (*_net_order(net), prio, hop, "", "")
            keyed.append((key, str(net), hop, prio, _sorted_gateways(gws)))
    keyed.sort(key=lambda k: k[0])
    limit = TEXTBUF_BUDGET - 4096
    while True:
        stmts: list[str] = []
        for _key, net_tok, hop, prio, gws_list in keyed:
            stmts.extend(_statements_cached(net_tok, hop, prio, tuple(gws_list), limit))
        text = "; ".join(stmts)
        if _fits_budget(stmts):
            return text
        if limit <= 4096:
            raise ValueError("routes too large for the kernel's text buffers")
        limit -= 4096


@functools.lru_cache(maxsize=1 << 16)
def _statements_cached(
    net_tok: str, hop: int, priority: int, gws: tuple[Nid, ...], limit: int
) -> tuple[str, ...]:
    # client classes of one site share most of their (net, priority) gateway groups
    return tuple(_statements_for(net_tok, hop, priority, gws, limit))


class _Peak(Budget):
    """A budget that records the highest level one statement's expansion reaches."""

    def __init__(self) -> None:
        super().__init__()
        self.peak = 0

    def alloc(self, text: str, offset: int) -> None:
        super().alloc(text, offset)
        self.peak = max(self.peak, self.live)


@functools.lru_cache(maxsize=1 << 16)
def _statement_peak(stmt: str) -> int:
    peak = _Peak()
    parse_statement(stmt, 0, peak, False)
    return peak.peak


def _fits_budget(stmts: Sequence[str]) -> bool:
    """What ``parse_routes_ordered`` checks, statement by statement: all statement buffers are
    allocated first and freed one by one, so statement ``i`` expands on top of the buffers of
    statements ``i..n``.  Each statement's own peak is computed once and cached."""
    pending = sum(Budget.cost(s) for s in stmts)
    if pending > TEXTBUF_BUDGET:
        return False
    for stmt in stmts:
        try:
            if pending + _statement_peak(stmt) > TEXTBUF_BUDGET:
                return False
        except RouteBudgetError:
            return False
        pending -= Budget.cost(stmt)
    return True
