"""The fine-grained-routing guarantees of a plan (``check_guarantees``): the solver runs it
before returning a plan, ``tunables`` to know whether route symmetry is proven, and the tests
on every shipped site."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from lnetgen import nodes
from lnetgen.plan import Plan, ServerPlan


def check_guarantees(
    plan: Plan, leaf_local: bool = True, mgs: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    """The fine-grained routing guarantees; returns one message per violation (empty = ok).

    1. coverage: every class reaches every storage net at priority 0; every server reaches
       every client net;
    2. leaf locality (unless ``leaf_local`` is False, i.e. baseline): a priority-0 gateway to a
       storage net sits on the leaf of that net's servers;
    3. symmetry: servers of net N route back through exactly the routers clients use for N,
       and every gateway has an interface on both nets;
    4. every route has hop 1;
    5. servers: the servers of one file system share a net pairwise (storage or server net),
       failover partners are reached by every client class like their primaries, the MGS
       servers of each file system (``mgs``: file system -> MGS and its partner) are reached by
       every client class, and no router or client has an interface or a route on a server net.
    """
    problems: list[str] = []
    by_nid = plan.router_by_nid()
    storage = {n.name: n for n in plan.storage_nets()}
    client_nets = {n.name for n in plan.client_nets()}
    router_leaf = {r.name: r.leaf for r in plan.routers}
    server_leaf = {s.name: s.leaf for s in plan.servers}
    rnets = {r.name: set(r.networks) for r in plan.routers}
    client_gw: dict[str, set[str]] = defaultdict(set)  # storage net -> router names (any prio)
    # each route set once (a class's table is its sets; nearest-neighbor on Blue Waters: 8,000
    # classes, 870,000 routes, a few hundred sets), named after the first class that holds it
    sets = plan.route_sets[0]
    reached = _priority0_nets(plan)  # once: 0.15 s on Blue Waters under nearest-neighbor
    for cc, prio0 in zip(plan.client_classes, reached, strict=True):
        for net in storage:
            if net not in prio0:
                problems.append(f"coverage: class {cc.name} has no priority-0 route to {net}")
    for rs in sets:
        cls = plan.client_classes[rs.users[0]].name
        local = rs.client_net
        for r in rs.routes:
            rp = by_nid.get(r.gateway)
            if rp is None:
                problems.append(f"class {cls}: gateway {r.gateway} is not a router NID")
                continue
            if r.hop != 1:
                problems.append(
                    f"hop: class {cls} route to {r.net} via {r.gateway} has hop {r.hop}, not 1"
                )
            nets = rnets[rp.name]
            if r.net not in nets or local not in nets:
                problems.append(
                    f"symmetry: gateway {rp.name} lacks an interface on "
                    f"{r.net if r.net not in nets else local}"
                )
            client_gw[r.net].add(rp.name)
            if leaf_local and r.priority == 0 and r.net in storage:
                bad = [s for s in storage[r.net].servers if server_leaf[s] != router_leaf[rp.name]]
                if bad:
                    problems.append(
                        f"leaf locality: {rp.name} ({router_leaf[rp.name]}) is a "
                        f"priority-0 gateway to {r.net} but {bad[0]} is on "
                        f"{server_leaf[bad[0]]}"
                    )
    served: set[str] = set()
    for sr in plan.server_routes:
        names = nodes.expand(sr.servers)
        served.update(names)
        got_nets = {r.net for r in sr.routes}
        for cn in client_nets:
            if cn not in got_nets:
                problems.append(f"coverage: servers {sr.servers} have no route to {cn}")
        gws = set()
        for r in sr.routes:
            rp = by_nid.get(r.gateway)
            if rp is None:
                problems.append(f"servers {sr.servers}: gateway {r.gateway} is not a router NID")
                continue
            if r.hop != 1:
                problems.append(f"hop: servers {sr.servers} route via {r.gateway} has hop {r.hop}")
            if sr.net not in rp.networks or r.net not in rp.networks:
                problems.append(
                    f"symmetry: gateway {rp.name} lacks an interface on {sr.net} or {r.net}"
                )
            gws.add(rp.name)
        if gws != client_gw.get(sr.net, set()):
            extra = sorted(gws ^ client_gw.get(sr.net, set()))
            problems.append(
                f"symmetry: servers on {sr.net} route back through a different router "
                f"set than clients use to reach it (differs in {nodes.fold(extra)})"
            )
    for s in plan.servers:
        if s.name not in served:
            problems.append(f"coverage: server {s.name} has no routes")
    return problems + _server_problems(plan, mgs or {}, reached)


def _server_problems(
    plan: Plan, mgs: Mapping[str, Sequence[str]], prio0: list[set[str]]
) -> list[str]:
    problems: list[str] = []
    nets = {s.name: set(s.networks) for s in plan.servers}
    by_fs: dict[str, list[ServerPlan]] = defaultdict(list)
    for s in plan.servers:
        by_fs[s.fs].append(s)
    for fs, members in sorted(by_fs.items()):
        if set.intersection(*(nets[s.name] for s in members)):
            continue  # one net holds them all
        apart = [
            (a.name, b.name)
            for i, a in enumerate(members)
            for b in members[i + 1 :]
            if not nets[a.name] & nets[b.name]
        ]
        if apart:
            problems.append(
                f"servers: {len(apart)} pair(s) of {fs} servers share no net, e.g. "
                f"{apart[0][0]} and {apart[0][1]}"
            )
    reached = [(c.name, got) for c, got in zip(plan.client_classes, prio0, strict=True)]
    home = {s.name: s for s in plan.servers}
    for s in plan.servers:
        p = home.get(s.failover) if s.failover else None
        if s.failover and (p is None or p.fs != s.fs or not nets[s.name] & nets[p.name]):
            problems.append(f"failover: {s.failover} does not share a net with {s.name}")
        for cls, got in reached if p else ():
            if s.net in got and p.net not in got:  # type: ignore[union-attr]
                problems.append(f"failover: class {cls} reaches {s.name} but not {s.failover}")
    for fs, names in sorted(mgs.items()):
        for name in names:
            srv = home.get(name)
            if srv is None:
                problems.append(f"mgs: {name} of {fs} is not a server of the plan")
                continue
            for cls, got in reached:
                if srv.net not in got:
                    problems.append(f"mgs: class {cls} cannot reach {name}, the MGS of {fs}")
    server_nets = {n.name for n in plan.server_nets()}
    for r in plan.routers:
        if server_nets & set(r.networks):
            problems.append(f"server net: router {r.name} has an interface on a server net")
    to_server_net = [any(r.net in server_nets for r in rs.routes) for rs in plan.route_sets[0]]
    for cc, idx in zip(plan.client_classes, plan.route_sets[1], strict=True):
        if cc.net in server_nets or any(to_server_net[i] for i in idx):
            problems.append(f"server net: class {cc.name} is on or routes to a server net")
    for sr in plan.server_routes:
        if any(r.net in server_nets for r in sr.routes):
            problems.append(f"server net: servers {sr.servers} route to a server net")
    return problems


def _priority0_nets(plan: Plan) -> list[set[str]]:
    """Per client class, the nets its table reaches at priority 0 (from its route sets)."""
    sets, class_sets = plan.route_sets
    reach = [{r.net for r in rs.routes if r.priority == 0} for rs in sets]
    return [set().union(*(reach[i] for i in idx)) for idx in class_sets]
