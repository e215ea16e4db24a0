"""The expected side of a diff: what the plan wants on every host (networks, routes, routing,
NIDs, the tunables generate writes), with the objects shared by the hosts of one client class
or server group."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from lnetgen import nodes
from lnetgen.diff.result import CLIENT, ROUTER, SERVER
from lnetgen.live import RouteKey
from lnetgen.model import Site
from lnetgen.plan import Interface, Plan, Route
from lnetgen.tunables import host_settings, symmetric
from lnetgen.udsp import Rule, router_rules


@dataclass(frozen=True)
class Expected:
    """What the plan wants on one host (the same objects are shared by a client class)."""

    role: str
    nets: Mapping[str, tuple[str, ...]]
    routes: Mapping[RouteKey, tuple[int, int]]
    routing: bool
    nids: Mapping[str, str] = field(default_factory=dict)
    #: the settings generate writes for this host (lnetgen.tunables' names)
    tunables: Mapping[str, int] = field(default_factory=dict)
    #: the UDSP router rules generate writes (clients, with ``lustre: {udsp: true}``)
    udsp: tuple[Rule, ...] = ()
    #: per net, the NIDs of the host's Multi-Rail ports (``nids`` holds its first NID)
    rail_nids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def expected_states(plan: Plan, site: Site | None = None) -> dict[str, Expected]:
    """Per-host proposed state.  With ``site``, clients' NIDs are known too (the plan keeps
    clients as folded classes without NIDs)."""
    out: dict[str, Expected] = {}
    sym = symmetric(plan)
    memo: dict[tuple[str, tuple[str, ...]], Mapping[str, int]] = {}

    def tun(role: str, nets: Iterable[str]) -> Mapping[str, int]:
        key = (role, tuple(nets))
        if key not in memo:
            memo[key] = (
                host_settings(site, role, key[1], sym).values
                if site is not None
                else ({"drop_asym_route": 1} if sym else {})
            )
        return memo[key]

    client_nid: dict[str, str] = {}
    if site is not None:
        client_nid = dict(zip(site.clients.names, site.clients.nids, strict=True))
    with_udsp = site is not None and site.lustre.udsp
    for cc in plan.client_classes:
        nets = {cc.net: (cc.interface,)}
        routes = _route_map(cc.routes)
        ct = tun(CLIENT, nets)
        rules = tuple(router_rules(cc.routes)) if with_udsp else ()
        shared = Expected(CLIENT, nets, routes, False, {}, ct, rules)
        for name in nodes.expand(cc.members):
            nid = client_nid.get(name)
            out[name] = (
                Expected(CLIENT, nets, routes, False, {cc.net: nid}, ct, rules) if nid else shared
            )
    for r in plan.routers:
        host_nets, first, rails = _nis(r.interfaces)
        out[r.name] = Expected(
            ROUTER, host_nets, {}, True, first, tun(ROUTER, host_nets), rail_nids=rails
        )
    by_routes: dict[int, Mapping[RouteKey, tuple[int, int]]] = {}
    for sr in plan.server_routes:
        by_routes[id(sr)] = _route_map(sr.routes)
    server_routes = {
        name: by_routes[id(sr)] for sr in plan.server_routes for name in nodes.expand(sr.servers)
    }
    for s in plan.servers:
        host_nets, first, rails = _nis(s.interfaces)
        out[s.name] = Expected(
            SERVER,
            host_nets,
            server_routes.get(s.name, {}),
            False,
            first,
            tun(SERVER, host_nets),
            rail_nids=rails,
        )
    return out


def _nis(
    nis: Iterable[Interface],
) -> tuple[dict[str, tuple[str, ...]], dict[str, str], dict[str, tuple[str, ...]]]:
    """A router's or server's NIs (grouped by net, first port first) as its expected nets
    (net -> sorted interfaces), first NID per net, and the NIDs of its Multi-Rail ports."""
    ifaces: dict[str, set[str]] = {}
    nids: dict[str, list[str]] = {}
    for i in nis:
        ifaces.setdefault(i.net, set()).add(i.interface)
        nids.setdefault(i.net, []).append(i.nid)
    return (
        {n: tuple(sorted(v)) for n, v in ifaces.items()},
        {n: v[0] for n, v in nids.items()},
        {n: tuple(v[1:]) for n, v in nids.items() if len(v) > 1},
    )


def _route_map(routes: Iterable[Route]) -> dict[RouteKey, tuple[int, int]]:
    return {(r.net, r.gateway): (r.hop, r.priority) for r in routes}
