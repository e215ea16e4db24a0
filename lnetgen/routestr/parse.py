"""The ``routes=`` grammar: statements, hop counts, gateways and priorities, as the kernel
parses them (``lnet_str2tbs_sep``, ``lnet_parse_route``), and the routes it then installs.

``:PRIORITY`` is split off *after* expansion, but the kernel keeps one priority variable per
statement: every route of a statement gets the priority of the **last** gateway parsed.  So
``gni 1 10.0.0.1@o2ib:1 10.0.0.2@o2ib`` installs both routes with priority 0.
``parse_routes`` reports what the kernel installs; ``strict=True`` makes it an error.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from lnetgen.nodes import Net, Nid
from lnetgen.routestr.kernel import DIGITS, SPACE, U32_MAX, RouteSyntaxError
from lnetgen.routestr.kroute import KRoute, check_gateway, kernel_nid, route_net
from lnetgen.routestr.ranges import Budget, Text, expand_iter

_SEPARATORS = ";\n\r"  # lnet_issep()


def _statements(text: str) -> list[tuple[int, str]]:
    """``lnet_str2tbs_sep``: (offset, statement) pairs, comments removed."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in SPACE:
            i += 1
        j = i
        while j < n and text[j] not in _SEPARATORS and text[j] != "#":
            j += 1
        if j > i:
            out.append((i, text[i:j]))
        if j < n and text[j] == "#":
            while j < n and text[j] not in _SEPARATORS:
                j += 1
        if j >= n:
            return out
        i = j + 1


def _tokens(stmt: str, base: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    i, n = 0, len(stmt)
    while i < n:
        if stmt[i] in SPACE:
            i += 1
            continue
        j = i
        while j < n and stmt[j] not in SPACE:
            j += 1
        out.append((base + i, stmt[i:j]))
        i = j
    return out


def _parse_hops(token: str) -> int | None:
    """``lnet_parse_hops``: whole-token unsigned 1..255, else ``None`` (token is a gateway)."""
    if not DIGITS.fullmatch(token):
        return None
    value = int(token)
    if value > U32_MAX:
        return None
    return value if 0 < value < 256 else None


@dataclass
class _Gw:
    nid: Nid
    priority: int
    offset: int


def parse_statement(stmt: str, base: int, budget: Budget, strict: bool) -> list[tuple[KRoute, int]]:
    """``lnet_parse_route`` on one statement at offset ``base``: its routes, each with the
    offset of its gateway token, drawing the expansions' buffers from ``budget``."""
    toks = _tokens(stmt, base)
    nets: list[Net] = []
    gws: list[_Gw] = []
    hops = -1
    for index, (off, tok) in enumerate(toks):
        if index == 1:
            h = _parse_hops(tok)
            if h is not None:
                hops = h
                continue
            if DIGITS.fullmatch(tok):
                raise RouteSyntaxError(
                    f"{tok!r} in place of the hop count is not 1-255, and not a gateway NID", off
                )
        budget.alloc(tok, off)
        for t in expand_iter(Text(tok, list(range(off, off + len(tok)))), budget):
            if index == 0:
                try:
                    nets.append(route_net(t.text))
                except ValueError as exc:
                    raise RouteSyntaxError(f"bad target net: {exc}", off) from None
            else:
                gws.append(_parse_gateway(t, off))
    if len(toks) < (3 if hops != -1 else 2):
        end = base + len(stmt.rstrip(SPACE))
        raise RouteSyntaxError(
            f"statement {stmt.strip()!r} has no gateway (expected NET [HOPS] GATEWAY...)", end
        )
    priority = gws[-1].priority  # one variable per statement in the kernel: the last one wins
    if strict:
        for g in gws:
            if g.priority != priority:
                raise RouteSyntaxError(
                    f"gateway {g.nid} has priority {g.priority} but the kernel applies the "
                    f"statement's last priority ({priority}) to every gateway; split the "
                    "statement",
                    g.offset,
                )
    out: list[tuple[KRoute, int]] = []
    for net in nets:
        for g in gws:
            try:
                check_gateway(g.nid, net)
            except ValueError as exc:
                raise RouteSyntaxError(str(exc), g.offset) from None
            out.append((KRoute(str(net), str(g.nid), hops, priority), g.offset))
    return out


def _parse_gateway(t: Text, token_offset: int) -> _Gw:
    text = t.text
    colon = text.find(":")
    priority = 0
    if colon >= 0:
        prio = text[colon + 1 :]
        if not DIGITS.fullmatch(prio):
            raise RouteSyntaxError(
                f"bad priority {prio!r} in gateway {text!r} (expected an unsigned integer)",
                t.at(colon + 1),
            )
        priority = int(prio)
        if priority > U32_MAX:
            raise RouteSyntaxError(
                f"priority {prio} exceeds {U32_MAX} (the kernel's %u would wrap it)",
                t.at(colon + 1),
            )
        text = text[:colon]
    try:
        nid = kernel_nid(text)
    except ValueError as exc:
        raise RouteSyntaxError(f"bad gateway: {exc}", token_offset) from None
    return _Gw(nid, priority, token_offset)


def parse_routes_ordered(text: str, *, strict: bool = False) -> list[KRoute]:
    """Every route a ``routes=`` string asks for, in the order the kernel adds them.

    Duplicates are kept: the kernel keeps the *first* route per (net, gateway) and ignores
    later ones (``-EEXIST``), see ``effective_routes``.  ``strict`` also rejects what the kernel
    accepts but almost certainly was not meant: mixed priorities in one statement, and the
    same (net, gateway) given twice with different hop or priority.
    Raises ``RouteSyntaxError`` (``RouteBudgetError`` for buffer exhaustion).
    """
    stmts = _statements(text)
    budget = Budget()
    for off, stmt in stmts:
        budget.alloc(stmt, off)
    out: list[KRoute] = []
    seen: dict[tuple[str, str], KRoute] = {}
    for off, stmt in stmts:
        inner = Budget()
        inner.live = budget.live
        for route, gw_off in parse_statement(stmt, off, inner, strict):
            first = seen.setdefault((route.net, route.gateway), route)
            if strict and first != route:
                raise RouteSyntaxError(
                    f"route to {route.net} via {route.gateway} given again with hop "
                    f"{route.hop} priority {route.priority}; the kernel keeps the first "
                    f"(hop {first.hop} priority {first.priority})",
                    gw_off,
                )
            out.append(route)
        budget.free(stmt)
    return out


def parse_routes(text: str, *, strict: bool = False) -> list[KRoute]:
    """Parse a kernel ``routes=`` string: the sorted set of routes it asks for.

    See ``parse_routes_ordered`` for ``strict`` and errors.
    """
    return sorted(set(parse_routes_ordered(text, strict=strict)))


def effective_routes(text: str) -> list[KRoute]:
    """What the kernel installs: the first route per (net, gateway) wins; sorted."""
    first: dict[tuple[str, str], KRoute] = {}
    for r in parse_routes_ordered(text):
        first.setdefault((r.net, r.gateway), r)
    return sorted(first.values())


def route_conflicts(routes: Iterable[KRoute]) -> list[tuple[KRoute, KRoute]]:
    """Pairs of routes with the same (net, gateway) but different hop or priority."""
    by_key: dict[tuple[str, str], list[KRoute]] = {}
    for r in sorted(set(routes)):
        by_key.setdefault((r.net, r.gateway), []).append(r)
    return [(a, b) for key in sorted(by_key) for a, b in itertools.combinations(by_key[key], 2)]
