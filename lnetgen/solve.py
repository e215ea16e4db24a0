"""Solve: a validated ``Site`` + a strategy name -> ``Plan``.

The strategy designs storage nets (``NetSpec``); this module does what every layout shares:
numbers the nets, gives routers their interfaces, puts the servers of a storage fabric that the
layout splits over several storage nets on the fabric's shared server net, folds clients with
identical route tables (and the same net and interface) into classes, writes the servers'
routes back through the same routers, and proves the guarantees (``guarantees.check_guarantees``)
before returning.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping

import numpy as np

from lnetgen import __version__, nodes
from lnetgen.diagnostics import Diagnostic
from lnetgen.gateways import gateway_problems
from lnetgen.guarantees import check_guarantees
from lnetgen.model import Router, Site
from lnetgen.plan import (
    CLIENT,
    SERVER,
    STORAGE,
    WHY_ALTERNATE,
    WHY_BACKUP,
    WHY_PRIMARY,
    ClientClass,
    Interface,
    Network,
    Plan,
    Route,
    RouterPlan,
    ServerPlan,
    ServerRoutes,
)
from lnetgen.strategies import REGISTRY, NetSpec, SolveError
from lnetgen.strategies.base import label, solve_error


def strategy_names() -> list[str]:
    return list(REGISTRY)


def _number_nets(
    site: Site, specs: list[NetSpec], keep: Mapping[str, str] | None = None
) -> list[str]:
    """Storage net names: ``<lnd><fs.net_base + k>`` for a file system with a base, else
    ``<lnd><storage_net_base + k>`` counting the remaining nets in order.

    ``keep`` (group -> net name, from the plan deployed now) keeps the number of every net
    whose group (OSS, leaf, or N:M group) is still there, on the same LND and file system
    range; the other nets take the lowest free numbers of their sequence.  Without ``keep``
    the numbering is the plain sequence."""
    lnd = site.strategy.storage_lnd
    bases = {f.name: f.net_base for f in site.filesystems}
    kept: dict[int, int] = {}  # spec index -> kept number
    taken: set[int] = set()
    for i, spec in enumerate(specs):
        old = (keep or {}).get(spec.group) if spec.group else None
        if old is None:
            continue
        try:
            net = nodes.parse_net(old)
        except nodes.NodeSyntaxError:
            continue
        if net.lnd == lnd and net.number not in taken:
            kept[i] = net.number
            taken.add(net.number)
    per_fs: dict[str, int] = defaultdict(int)
    global_k = 0
    names: list[str] = []
    for i, spec in enumerate(specs):
        fs = spec.fs
        if i in kept:
            number = kept[i]
        elif fs and bases.get(fs) is not None:
            while int(bases[fs]) + per_fs[fs] in taken:  # type: ignore[arg-type]
                per_fs[fs] += 1
            number = int(bases[fs]) + per_fs[fs]  # type: ignore[arg-type]
            per_fs[fs] += 1
        else:
            while site.strategy.storage_net_base + global_k in taken:
                global_k += 1
            number = site.strategy.storage_net_base + global_k
            global_k += 1
        if number > nodes.MAX_NET_NUMBER:
            raise solve_error(
                site,
                "E-NET-RANGE",
                f"storage net number {number} for {spec.group} exceeds "
                f"{nodes.MAX_NET_NUMBER}; lower net_base/storage_net_base",
            )
        names.append(str(nodes.Net(lnd, number)))
    seen: dict[str, int] = {}
    client = {str(c.net) for c in site.client_nets}
    for i, n in enumerate(names):
        if n in seen:
            raise solve_error(
                site,
                "E-NET-COLLIDE",
                f"storage nets of {specs[seen[n]].group} and {specs[i].group} are "
                f"both numbered {n}; space the file systems' net_base further apart",
            )
        if n in client:
            raise solve_error(
                site, "E-NET-COLLIDE", f"storage net {n} ({specs[i].group}) is also a client net"
            )
        seen[n] = i
    return names


def kept_nets(plan: Plan) -> dict[str, str]:
    """group -> storage net name of ``plan``: what ``solve(keep=...)`` keeps."""
    return {n.group: n.name for n in plan.storage_nets() if n.group}


def solve(site: Site, strategy: str | None = None, keep: Mapping[str, str] | None = None) -> Plan:
    """Solve ``site`` with ``strategy`` (default: the inventory's ``strategy.default``);
    ``keep`` (group -> net name, see :func:`kept_nets`) keeps the deployed net numbers.

    Raises ``SolveError`` when the layout cannot be formed or a guarantee does not hold.
    """
    name = strategy or site.strategy.default
    if name not in REGISTRY:
        raise solve_error(
            site, "E-STRATEGY", f"unknown strategy {name!r} (known: {', '.join(REGISTRY)})"
        )
    strat = REGISTRY[name]
    specs = strat.design(site)
    net_names = _number_nets(site, specs, keep)
    missing = gateway_problems(site, name, specs, net_names)
    if missing:
        raise SolveError(missing)
    clients = site.clients
    client_net_names = [str(n) for n in clients.nets]

    # ---- router interfaces: client side, then every storage net it serves or backs up
    rnets: dict[str, list[str]] = defaultdict(list)
    for spec, net in zip(specs, net_names, strict=True):
        for r in (*spec.routers, *spec.backup):
            if net not in rnets[r.name]:
                rnets[r.name].append(net)
    routers = tuple(
        RouterPlan(
            r.name,
            r.attach.label(),
            r.coords,
            (
                Interface(str(r.client_net), r.client_nid, r.client_interface),
                *(
                    Interface(n, f"{x.ip}@{n}", x.interface)
                    for n in sorted(rnets[r.name], key=_net_key)
                    for x in r.storage_ports
                ),
            ),
        )
        for r in site.routers
    )
    # a route names the router's first NI on the net; its rails are the same peer (Multi-Rail)
    rnid = {r.name: {n: r.nid_on(n) or "" for n in r.networks} for r in routers}

    networks = [Network(n, CLIENT) for n in client_net_names]
    snets = _server_nets(site, specs, net_names)
    server_plans: list[ServerPlan] = []
    server_routes: list[ServerRoutes] = []
    for spec, net in zip(specs, net_names, strict=True):
        prim = spec.routers
        networks.append(
            Network(
                net,
                STORAGE,
                tuple(s.name for s in spec.servers),
                tuple(_unique(r.name for r in (*prim, *spec.backup))),
                tuple(r.name for r in prim),
                label(spec.module) if spec.module else "",
                spec.fs,
                spec.group,
                spec.why,
            )
        )
        for s in spec.servers:
            snet = snets.get(s.fabric, "")
            server_plans.append(
                ServerPlan(
                    s.name,
                    s.role,
                    s.fs,
                    f"{s.ip}@{net}",
                    net,
                    s.interface,
                    s.attach.label(),
                    snet,
                    f"{s.ip}@{snet}" if snet else "",
                    s.failover,
                    tuple(
                        Interface(n, f"{rail.ip}@{n}", rail.interface)
                        for n in (net, snet)
                        if n
                        for rail in s.rails
                    ),
                )
            )
        # servers route back through exactly the routers clients use for this net
        routes: list[Route] = []
        for cnet in client_net_names:
            used = _client_side_routers(spec, clients.net_index, client_net_names.index(cnet), cnet)
            for r in prim:
                if r.name in used:
                    routes.append(Route(cnet, rnid[r.name][net], 1, 0, WHY_PRIMARY))
            for r in spec.backup:
                if r.client_net == nodes.parse_net(cnet) and r not in prim:
                    routes.append(
                        Route(
                            cnet,
                            rnid[r.name][net],
                            1,
                            spec.backup_priority,
                            WHY_BACKUP,
                        )
                    )
        server_routes.append(
            ServerRoutes(
                nodes.fold(s.name for s in spec.servers), net, tuple(sorted(routes, key=_route_key))
            )
        )

    for fabric, snet in sorted(snets.items()):
        members = sorted(s.name for s in site.servers if s.fabric == fabric)
        networks.append(Network(snet, SERVER, tuple(members), why=f"server net of fabric {fabric}"))
    classes = _client_classes(site, specs, net_names, rnid)
    plan = Plan(
        site=site.name,
        strategy=name,
        lnetgen_version=__version__,
        inventory_digest=site.digest,
        networks=tuple(networks),
        routers=routers,
        servers=tuple(sorted(server_plans, key=lambda s: s.name)),
        client_classes=classes,
        server_routes=tuple(server_routes),
        stats=_stats(site, specs, classes),
    )
    problems = check_guarantees(plan, leaf_local=strat.leaf_local, mgs=mgs_servers(site))
    if problems:
        raise guarantee_error(site.file, problems)
    return plan


#: How many guarantee failures a ``SolveError`` lists before saying how many more.
LISTED = 20


def guarantee_error(file: str, problems: list[str]) -> SolveError:
    """The first ``LISTED`` guarantee failures, then one line saying how many more (the
    error's ``more``, worded to sort after the failures it follows: diagnostics are sorted by
    message); readers take the count from ``unlisted``, not from the words."""
    diags = [Diagnostic(file, 0, 0, "error", "E-GUARANTEE", "$", p) for p in problems[:LISTED]]
    unlisted = max(0, len(problems) - LISTED)
    more = None
    if unlisted:
        text = f"too many guarantee failures to list: {unlisted} more"
        more = Diagnostic(file, 0, 0, "error", "E-GUARANTEE", "$", text)
        diags.append(more)
    return SolveError(diags, more=more, unlisted=unlisted)


def mgs_servers(site: Site) -> dict[str, list[str]]:
    """File system -> its MGS server and that server's failover partner (if any)."""
    out: dict[str, list[str]] = {}
    for f in site.filesystems:
        if f.mgs:
            partner = site.server(f.mgs).failover
            out[f.name] = [f.mgs, partner] if partner else [f.mgs]
    return out


def _server_nets(site: Site, specs: list[NetSpec], net_names: list[str]) -> dict[str, str]:
    """Storage fabric -> its server net, for each fabric whose servers this layout puts on more
    than one storage net (one shared storage net already joins them).  Raises E-NET-COLLIDE
    when the number is taken by a storage or client net after all."""
    nets_of: dict[str, set[str]] = defaultdict(set)
    for spec, net in zip(specs, net_names, strict=True):
        for s in spec.servers:
            nets_of[s.fabric].add(net)
    taken = set(net_names) | {str(c.net) for c in site.client_nets}
    out: dict[str, str] = {}
    for k, fabric in enumerate(site.fabrics):
        if fabric.server_net is None or len(nets_of.get(fabric.name, ())) < 2:
            continue
        name = str(nodes.Net(site.strategy.storage_lnd, fabric.server_net))
        if name in taken:
            raise solve_error(
                site,
                "E-NET-COLLIDE",
                f"server net {name} of fabric {fabric.name} is also a storage or client net",
                f"$.fabrics[{k}]",
            )
        taken.add(name)
        out[fabric.name] = name
    return out


def _client_side_routers(
    spec: NetSpec,
    net_index: np.ndarray,
    k: int,
    cnet: str,
) -> set[str]:
    """Names of the spec's primary routers that clients on client net ``k`` use."""
    same = [r for r in spec.routers if str(r.client_net) == cnet]
    return {r.name for r in same}


def _client_classes(
    site: Site, specs: list[NetSpec], net_names: list[str], rnid: dict[str, dict[str, str]]
) -> tuple[ClientClass, ...]:
    clients = site.clients
    n = len(clients)
    chosen = [s for s in specs if s.choice is not None]
    key = np.zeros((n, len(chosen) + 2), dtype=np.int32)
    key[:, 0] = clients.net_index
    key[:, 1] = clients.net_index if clients.iface_index is None else clients.iface_index
    for j, spec in enumerate(chosen):
        key[:, j + 2] = spec.choice  # type: ignore[assignment]
    uniq, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    members: list[list[int]] = [[] for _ in range(len(uniq))]
    for i, c in enumerate(inverse.tolist()):
        members[c].append(i)
    route_cache: dict[tuple[int, int, int], tuple[Route, ...]] = {}
    route_text: dict[tuple[int, int, int], str] = {}
    # visit specs in net order so that each class's table comes out sorted without a sort
    col = {}
    j = 0
    for si, spec in enumerate(specs):
        if spec.choice is not None:
            col[si] = j + 2
            j += 1
    order = sorted(range(len(specs)), key=lambda si: _net_key(net_names[si]))
    out: list[ClientClass] = []
    per_net_count = np.bincount(uniq[:, 0], minlength=len(clients.nets))
    for c, row in enumerate(uniq.tolist()):
        k = row[0]
        cnet = clients.nets[k]
        cnet_s = str(cnet)
        routes: list[Route] = []
        runs: list[tuple[Route, ...]] = []
        texts: list[str] = []
        for si in order:
            spec = specs[si]
            pick = row[col[si]] if si in col else -1
            ck = (si, k, pick)
            cached = route_cache.get(ck)
            if cached is None:
                cached = route_cache[ck] = tuple(
                    sorted(_spec_routes(spec, net_names[si], cnet_s, pick, rnid), key=_route_key)
                )
                route_text[ck] = "\n".join(
                    f"{r.net} {r.gateway} {r.hop} {r.priority}" for r in cached
                )
            routes.extend(cached)
            if cached:
                runs.append(cached)
                texts.append(route_text[ck])
        iface = clients.interface_of(members[c][0])
        if per_net_count[k] == 1:
            name = f"clients-{cnet_s}"
        else:
            # a class on another interface than its net's default is told apart by it too
            other = f"\ninterface {iface}" if iface != clients.interfaces[k] else ""
            # the table's lines joined (each run of routes to one net written once)
            digest = hashlib.sha256(("\n".join(texts) + other).encode()).hexdigest()[:8]
            name = f"clients-{cnet_s}-{digest}"
        names = [clients.names[i] for i in members[c]]
        out.append(
            ClientClass(
                name, cnet_s, iface, nodes.fold(names), len(names), tuple(routes), tuple(runs)
            )
        )
    out.sort(key=lambda cc: (cc.net, cc.name))
    return tuple(out)


def _spec_routes(
    spec: NetSpec, net: str, cnet: str, pick: int, rnid: dict[str, dict[str, str]]
) -> list[Route]:
    routes = []
    for idx, r in enumerate(spec.routers):
        if str(r.client_net) != cnet:
            continue
        gw = rnid[r.name][cnet]
        if pick < 0 or idx == pick:
            routes.append(Route(net, gw, 1, 0, WHY_PRIMARY))
        else:
            routes.append(Route(net, gw, 1, spec.set_backup_priority, WHY_ALTERNATE))
    for r in spec.backup:
        if str(r.client_net) == cnet and r not in spec.routers:
            routes.append(
                Route(
                    net,
                    rnid[r.name][cnet],
                    1,
                    spec.backup_priority,
                    WHY_BACKUP,
                )
            )
    return routes


def _stats(site: Site, specs: list[NetSpec], classes: tuple[ClientClass, ...]) -> dict[str, object]:
    """Summary figures: nets, classes, routes per client, and router load as the expected
    number of clients a router carries, summed over nets (a client that LNet balances over k
    priority-0 gateways counts 1/k for each)."""
    from lnetgen import topology

    load: dict[str, float] = {r.name: 0.0 for r in site.routers}
    n = len(site.clients)
    hops_total = 0
    for spec in specs:
        if spec.choice is not None:
            counts = np.bincount(spec.choice, minlength=len(spec.routers))
            for r, c in zip(spec.routers, counts.tolist(), strict=True):
                load[r.name] += c
            if site.torus is not None:
                coords = np.asarray([r.coords for r in spec.routers], dtype=np.int64)
                hops = np.asarray(topology.torus_hops(site.clients.coords, coords, site.torus.dims))
                hops_total += int(hops[np.arange(n), spec.choice].sum())
        else:
            for r in spec.routers:
                load[r.name] += n / len(spec.routers)
    serving = [v for v in load.values() if v > 0]
    routes_per_client = [len(c.routes) for c in classes]
    stats: dict[str, object] = {
        "storage_nets": len(specs),
        "client_classes": len(classes),
        "routes_per_client": {
            "min": min(routes_per_client, default=0),
            "max": max(routes_per_client, default=0),
        },
        "router_load": {
            "min": round(min(serving, default=0), 3),
            "max": round(max(serving, default=0), 3),
        },
        "idle_routers": len(load) - len(serving),
    }
    if hops_total:
        stats["total_hops"] = hops_total
    return stats


def _route_key(r: Route) -> tuple[object, ...]:
    return (_net_key(r.net), r.priority, nodes.parse_nid(r.gateway).sort_key())


def _net_key(net: str) -> tuple[str, int]:
    n = nodes.parse_net(net)
    return (n.lnd, n.number)


def _unique(items: object) -> list[str]:
    seen: list[str] = []
    for x in items:  # type: ignore[attr-defined]
        if x not in seen:
            seen.append(x)
    return seen


__all__ = ["Router", "SolveError", "solve", "strategy_names"]
