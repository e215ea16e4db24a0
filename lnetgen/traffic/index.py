"""A plan indexed against its site: integer ids for routers, nets, servers, client classes and
server groups, and every route as a row (see ``rows``), so the model works on arrays.

Indexing also collects the findings about the route tables (see ``findings``) and checks that
plan and site belong together.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from lnetgen import nodes
from lnetgen.distance import router_switches
from lnetgen.model import Site
from lnetgen.plan import Plan, Route
from lnetgen.traffic.findings import Finding, hop_text, reason_text, route_reason
from lnetgen.traffic.rows import NO_PRIO, Rows, group_min, make_rows
from lnetgen.traffic.settings import FloatArray, IntArray, Settings, input_error, settings_for


class Side(NamedTuple):
    """One side of the route tables: client classes to storage nets, or server route-table
    groups to client nets.  Pair key: ``sender * width + net``."""

    name: str  # client | server
    rows: Rows
    senders: tuple[str, ...]  # class names / server groups (folded node sets)
    size: IntArray  # clients per class / servers per group
    nets: tuple[str, ...]  # destination nets

    @property
    def width(self) -> int:
        return len(self.nets)

    @property
    def nkeys(self) -> int:
        return len(self.senders) * len(self.nets)

    def pair(self, key: int) -> tuple[str, str]:
        """The sender and destination net of pair ``key``."""
        who, net = divmod(key, len(self.nets))
        return self.senders[who], self.nets[net]


@dataclass(frozen=True, eq=False)
class PlanIndex:
    """A plan indexed against its site: integer ids and route rows for vectorized analysis.

    Client-side pair key: ``class * len(nets) + net``; server-side: ``group * len(client_nets) +
    client net``.  Build with :func:`index_plan`.
    """

    site: Site
    plan: Plan
    routers: tuple[str, ...]
    router_leaf: tuple[str, ...]
    router_coords: IntArray | None
    nets: tuple[str, ...]  # storage nets
    client_nets: tuple[str, ...]
    servers: tuple[str, ...]
    server_net: IntArray
    server_leaf: tuple[str, ...]
    server_flows: FloatArray  # flows each server offers under the uniform workload
    classes: tuple[str, ...]
    class_count: IntArray
    class_cnet: IntArray
    client_class: IntArray  # (N,), -1 for a client in no class
    client_cnet: IntArray  # (N,), -1 for a client on a net the plan does not know
    crows: Rows
    sgroups: tuple[str, ...]
    sgroup_size: IntArray
    server_group: IntArray  # (S,), -1 for a server with no route table
    srows: Rows
    findings: tuple[Finding, ...]
    memo: dict[str, Any] = field(default_factory=dict, repr=False)  # derived tables, lazily
    #: each router's dragonfly switch (``lnetgen.distance.router_switches``); None elsewhere
    router_switch: IntArray | None = None

    @property
    def net_flows(self) -> FloatArray:
        flows = np.bincount(self.server_net, weights=self.server_flows, minlength=len(self.nets))
        return np.asarray(flows, dtype=np.float64)

    def router_id(self, name: str) -> int:
        return self.routers.index(name)

    def server_id(self, name: str) -> int:
        try:
            return self.servers.index(name)
        except ValueError:
            raise input_error("E-ANALYZE-SERVER", f"no server {name!r} in the plan") from None

    def sides(self) -> tuple[Side, Side]:
        """The client side (classes to storage nets) and the server side (route table groups
        to client nets)."""
        return (
            Side("client", self.crows, self.classes, self.class_count, self.nets),
            Side("server", self.srows, self.sgroups, self.sgroup_size, self.client_nets),
        )


def index_plan(site: Site, plan: Plan, settings: Settings | None = None) -> PlanIndex:
    """Index ``plan`` against ``site``.  Raises ``InputError`` when they do not belong together
    (a class member or server the site does not have)."""
    settings = settings or settings_for(site)
    if settings.weight_by not in ("osts", "servers"):
        raise input_error(
            "E-USAGE", f"weight_by must be 'osts' or 'servers', not {settings.weight_by!r}"
        )
    findings: list[Finding] = []
    routers = tuple(r.name for r in plan.routers)
    rid = {n: i for i, n in enumerate(routers)}
    nid_router = {i.nid: rid[r.name] for r in plan.routers for i in r.interfaces}
    router_nets = [frozenset(r.networks) for r in plan.routers]
    coords: IntArray | None = None
    if site.torus is not None and all(r.coords is not None for r in plan.routers):
        coords = np.asarray([r.coords for r in plan.routers], dtype=np.int64).reshape(-1, 3)

    nets = tuple(n.name for n in plan.storage_nets())
    net_id = {n: i for i, n in enumerate(nets)}
    cnets = tuple(n.name for n in plan.client_nets())
    cnet_id = {n: i for i, n in enumerate(cnets)}

    servers = tuple(s.name for s in plan.servers)
    server_net = np.asarray([net_id.get(s.net, -1) for s in plan.servers], dtype=np.int64)
    if (server_net < 0).any():
        bad = plan.servers[int(np.nonzero(server_net < 0)[0][0])]
        raise input_error("E-ANALYZE-PLAN", f"server {bad.name} is on {bad.net}, not a storage net")
    site_servers = {s.name: s for s in site.servers}
    missing = [s for s in servers if s not in site_servers]
    if missing:
        raise input_error(
            "E-ANALYZE-PLAN",
            f"the plan has servers the inventory does not: "
            f"{nodes.fold(missing)} (plan from another site?)",
        )
    site_routers = {r.name for r in site.routers}
    strangers = [r.name for r in plan.routers if r.name not in site_routers]
    if strangers:
        raise input_error(
            "E-ANALYZE-PLAN",
            f"the plan has routers the inventory does not: "
            f"{nodes.fold(strangers)} (plan from another site?)",
        )
    if settings.weight_by == "servers" or not any(s.osts for s in site.servers):
        flows = [1.0 for _ in servers]
    else:
        flows = [
            float(len(site_servers[s].osts)) if site_servers[s].role == "oss" else 0.0
            for s in servers
        ]

    # ---- clients -> classes
    n = len(site.clients)
    client_id = {name: i for i, name in enumerate(site.clients.names)}
    client_class = np.full(n, -1, dtype=np.int64)
    for ci, cc in enumerate(plan.client_classes):
        try:
            idx = [client_id[m] for m in nodes.expand(cc.members)]
        except KeyError as exc:
            raise input_error(
                "E-ANALYZE-PLAN",
                f"class {cc.name} lists {exc.args[0]}, which is not a "
                "client of the inventory (plan from another site?)",
            ) from None
        client_class[idx] = ci
    site_cnet = np.asarray([cnet_id.get(str(net), -1) for net in site.clients.nets], dtype=np.int64)
    client_cnet = site_cnet[site.clients.net_index] if n else np.zeros(0, dtype=np.int64)
    orphans = int((client_class < 0).sum())
    if orphans:
        findings.append(
            Finding(
                "client-without-routes",
                f"{orphans} client(s) belong to no client class and have no routes",
                orphans,
            )
        )

    # ---- client-side rows
    gw_net: dict[str, str] = {}  # gateway NID -> its net, canonical
    route_sets, class_sets = plan.route_sets
    crows = _table_rows(
        "client",
        [(cc.net, idx) for cc, idx in zip(plan.client_classes, class_sets, strict=True)],
        [rs.routes for rs in route_sets],
        net_id,
        router_nets,
        nid_router,
        gw_net,
        routers,
        findings,
    )

    # ---- server-side rows
    sgroups = tuple(sr.servers for sr in plan.server_routes)
    server_group = np.full(len(servers), -1, dtype=np.int64)
    sid = {s: i for i, s in enumerate(servers)}
    sizes = []
    for gi, sr in enumerate(plan.server_routes):
        members = [sid[m] for m in nodes.expand(sr.servers) if m in sid]
        server_group[members] = gi
        sizes.append(len(members))
    srows = _table_rows(
        "server",
        [(sr.net, (i,)) for i, sr in enumerate(plan.server_routes)],
        [sr.routes for sr in plan.server_routes],
        cnet_id,
        router_nets,
        nid_router,
        gw_net,
        routers,
        findings,
    )
    no_table = [servers[i] for i in np.nonzero(server_group < 0)[0].tolist()]
    if no_table:
        findings.append(
            Finding(
                "server-without-routes",
                f"{nodes.fold(no_table)} have no route table",
                len(no_table),
            )
        )

    ix = PlanIndex(
        site=site,
        plan=plan,
        routers=routers,
        router_leaf=tuple(r.leaf for r in plan.routers),
        router_coords=coords,
        nets=nets,
        client_nets=cnets,
        servers=servers,
        server_net=server_net,
        server_leaf=tuple(s.leaf for s in plan.servers),
        server_flows=np.asarray(flows, dtype=np.float64),
        classes=tuple(c.name for c in plan.client_classes),
        class_count=np.asarray([c.count for c in plan.client_classes], dtype=np.int64),
        class_cnet=np.asarray(
            [cnet_id.get(c.net, -1) for c in plan.client_classes], dtype=np.int64
        ),
        client_class=client_class,
        client_cnet=client_cnet,
        crows=crows,
        sgroups=sgroups,
        sgroup_size=np.asarray(sizes, dtype=np.int64),
        server_group=server_group,
        srows=srows,
        findings=(),
        router_switch=(
            router_switches(site, [site.router(r) for r in routers])
            if site.dragonfly is not None
            else None
        ),
    )
    findings.extend(_coverage_findings(ix))
    object.__setattr__(ix, "findings", tuple(findings))
    return ix


def _table_rows(
    side: str,
    tables: Sequence[tuple[str, Sequence[int]]],
    segments: Sequence[tuple[Route, ...]],
    target_id: dict[str, int],
    router_nets: list[frozenset[str]],
    nid_router: dict[str, int],
    gw_net: dict[str, str],
    routers: tuple[str, ...],
    findings: list[Finding],
) -> Rows:
    """Rows (key, router, priority, dead reason) of route tables; table ``t`` is the routes of
    ``segments[j]`` for ``j`` in its indices (a client class's route sets, ``Plan.route_sets``),
    and its route to net ``n`` gets key ``t * len(target_id) + target_id[n]``.  Each segment is
    judged once per local net and its rows repeated for every table that holds it (Blue Waters'
    nearest-neighbor plan: 870,000 routes in 8,000 classes, a few hundred segments).  Routes
    dead on paper and hop counts other than 1 are added to ``findings``, counted per (reason,
    gateway, net) over every table."""
    width = len(target_id)
    # one row block per distinct (segment, local net): target, router, priority, reason
    block: dict[tuple[int, str], int] = {}
    cols: list[list[int]] = [[], [], [], []]
    starts: list[int] = []
    lengths: list[int] = []
    routes_of: list[tuple[str, list[Route]]] = []
    pair_t: list[int] = []
    pair_b: list[int] = []
    for ti, (local, idx) in enumerate(tables):
        for j in idx:
            b = block.get((j, local))
            if b is None:
                b = block[(j, local)] = len(starts)
                starts.append(len(cols[0]))
                kept: list[Route] = []
                for r in segments[j]:
                    ni = target_id.get(r.net)
                    if ni is None:
                        continue
                    ri = nid_router.get(r.gateway, -1)
                    cols[0].append(ni)
                    cols[1].append(ri)
                    cols[2].append(r.priority)
                    cols[3].append(route_reason(ri, router_nets, r.net, local, gw_net, r.gateway))
                    kept.append(r)
                lengths.append(len(kept))
                routes_of.append((local, kept))
            pair_t.append(ti)
            pair_b.append(b)
    uses = np.bincount(np.asarray(pair_b, dtype=np.int64), minlength=len(starts))
    hop_issues: dict[tuple[str, int], int] = defaultdict(int)
    dead: dict[tuple[int, str, str, str], int] = defaultdict(int)
    row = 0
    for b, (local, kept) in enumerate(routes_of):
        for r in kept:
            reason = cols[3][row]
            row += 1
            if not uses[b]:
                continue
            if reason:
                dead[(reason, r.gateway, r.net, local)] += int(uses[b])
            if r.hop != 1:
                hop_issues[(r.net, r.hop)] += int(uses[b])
    for (reason, gw, net, loc), count in sorted(dead.items()):
        findings.append(
            Finding(
                "route-dead-on-paper",
                f"{side} route to {net}: {reason_text(reason, gw, net, loc, routers, nid_router)}",
                count,
            )
        )
    for (net, hop), count in sorted(hop_issues.items()):
        findings.append(Finding("route-hop", hop_text(side, net, hop), count))
    # every table's rows: its blocks' rows in order, keys offset by the table
    t = np.asarray(pair_t, dtype=np.int64)
    b_arr = np.asarray(pair_b, dtype=np.int64)
    n = np.asarray(lengths, dtype=np.int64)[b_arr] if len(b_arr) else np.zeros(0, np.int64)
    total = int(n.sum())
    which = np.repeat(np.arange(len(b_arr)), n)
    first = np.concatenate([[0], np.cumsum(n)[:-1]]) if len(n) else np.zeros(0, np.int64)
    at = np.asarray(starts, dtype=np.int64)[b_arr][which] + (np.arange(total) - first[which])
    c = [np.asarray(col, dtype=np.int64)[at] for col in cols]
    return make_rows(t[which] * width + c[0], c[1], c[2], c[3])


def _coverage_findings(ix: PlanIndex) -> list[Finding]:
    """Pairs whose best declared priority is dead on paper, or that have no live route."""
    out: list[Finding] = []
    for side in ix.sides():
        rows, nkeys = side.rows, side.nkeys
        if not nkeys:
            continue
        declared = group_min(rows.key, rows.prio, nkeys, np.ones(len(rows.key), dtype=bool))
        planned = group_min(rows.key, rows.prio, nkeys, rows.ok)
        expected = np.repeat(side.size > 0, side.width)
        none = np.nonzero(expected & (planned == NO_PRIO))[0]
        worse = np.nonzero((planned != NO_PRIO) & (planned > declared))[0]
        for kind, keys, text in (
            ("pair-without-route", none, "{a} has no route alive on paper to {b}"),
            (
                "pair-paper-priority",
                worse,
                "{a} reaches {b} only at a worse priority than its table declares (its best "
                "routes are dead on paper)",
            ),
        ):
            if not len(keys):
                continue
            names = [side.pair(int(k)) for k in keys[:5]]
            more = f" (and {len(keys) - 5} more)" if len(keys) > 5 else ""
            listed = "; ".join(text.format(a=a, b=b) for a, b in names)
            out.append(Finding(kind, f"{side.name} side: {listed}{more}", len(keys)))
    return out
