"""Analysis of a solved plan against its inventory: storage-fabric spine crossings, torus link
loads, router failures, and the strategies side by side.

Everything here reads a ``Plan`` (what the route tables say) and the ``Site`` (where clients,
routers and servers sit) and returns data; nothing prints.

Traffic model (the unit is the *flow*: one OST streaming at the per-OST rate, 180 MB/s by
default, so a link carrying more than ``link_mb_s / ost_mb_s`` flows is past saturation; this is
seed 000's "client-OST pairs per link"):

* Uniform workload: every client takes an equal share of every OST's stream, so a server with
  k OSTs offers k flows in all, 1/N of them to each of the N clients.  MDS carry no bulk flows
  (``weight_by="servers"`` instead counts every server, MDS included, as one flow).
* Explicit workloads (``Workload``, e.g. from ``lnetgen.place``) list client/server pairs with
  their flows.
* Writes: a client's traffic to a storage net is spread evenly over its gateways at the best
  live priority (priority 0 unless routers failed) -- LNet round-robins over the routes of one
  priority.  The flow then goes client -> router on the torus and router -> server on the
  storage fabric.
* Reads: a server's traffic to a client net is spread evenly over the *server's* gateways at the
  best live priority (bulk reads are sent by the server, so its own route table picks the
  router), then router -> client on the torus.  For round-robin and nearest-neighbor the
  servers route back through every router of the set, so reads do not follow the client's
  chosen router.
* Torus paths follow dimension-order routing (``topology.link_loads`` with the site's routing
  mode); storage-fabric paths cross the spine when router and server sit on different leaf
  modules, and then use an uplink of each of the two leaves (traffic spread evenly over a
  leaf's uplinks).

Failures: a route is dead when its gateway failed, and dead "on paper" when the gateway has no
interface on the remote net (``avoid_asym_router_failure`` marks such single-hop routes down),
none on the sender's own net, or is no router at all.  A (client class, storage net) pair, or a
(server group, client net) pair, is *lost* with no live route, falls *back* when only a worse
priority than planned is alive, and is *degraded* with fewer live gateways at the planned one.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from lnetgen import nodes, topology
from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.model import Site
from lnetgen.plan import Plan, Route

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: SeaStar2+ one-way link bandwidth measured in seed 000 (MB/s).
LINK_MB_S = 3020.0
#: Per-OST streaming rate in seed 000's direct-attached tests (MB/s).
OST_MB_S = 180.0
#: Port names of a router's six torus links, by the side the neighbour is on.
PORTS = topology.DIRECTIONS
#: Pair states, best first.
OK, DEGRADED, FALLBACK, LOST = "ok", "degraded", "fallback", "lost"

_NO_PRIO = np.int64(2**62)
# why a route is dead on paper (0 = alive)
_DEAD_REASONS = {
    1: "gateway {gw} is not a router NID in the plan",
    2: "gateway {gw} ({router}) has no interface on {net}, so LNet marks the single-hop route "
    "down (avoid_asym_router_failure)",
    3: "gateway {gw} ({router}) has no interface on the sender's net {local}",
    4: "gateway {gw} is not on the sender's net {local}, so the sender cannot reach it",
}


def input_error(code: str, message: str) -> InputError:
    """An ``InputError`` with one diagnostic that has no file location."""
    return InputError([Diagnostic("", 0, 0, "error", code, "$", message)])


_err = input_error


# ============================================================================ settings, data


@dataclass(frozen=True)
class Settings:
    """Model parameters: link and OST rates (MB/s) and what a server's flows are counted by."""

    link_mb_s: float = LINK_MB_S
    ost_mb_s: float = OST_MB_S
    weight_by: str = "osts"  # osts | servers

    @property
    def saturation(self) -> float:
        """Flows a torus link carries before its one-way bandwidth is exceeded."""
        return self.link_mb_s / self.ost_mb_s


@dataclass(frozen=True, eq=False)
class Workload:
    """Explicit client/server pairs: ``clients[i]`` (index into ``site.clients``) exchanges
    ``flows[i]`` flows with server ``servers[i]`` (a name)."""

    name: str
    clients: IntArray
    servers: tuple[str, ...]
    flows: FloatArray


@dataclass(frozen=True)
class Finding:
    """A problem in the route tables themselves (present before anything fails)."""

    code: str
    message: str
    count: int = 1  # how many routes/pairs it covers


@dataclass(frozen=True, eq=False)
class _Rows:
    """Route rows sorted by ``key`` (a dense index of the (sender, destination net) pair)."""

    key: IntArray
    router: IntArray  # -1: gateway is no router
    prio: IntArray
    ok: BoolArray  # alive on paper


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
    crows: _Rows
    sgroups: tuple[str, ...]
    sgroup_size: IntArray
    server_group: IntArray  # (S,), -1 for a server with no route table
    srows: _Rows
    findings: tuple[Finding, ...]
    memo: dict[str, Any] = field(default_factory=dict, repr=False)  # derived tables, lazily

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
            raise _err("E-ANALYZE-SERVER", f"no server {name!r} in the plan") from None


def index_plan(site: Site, plan: Plan, settings: Settings | None = None) -> PlanIndex:
    """Index ``plan`` against ``site``.  Raises ``InputError`` when they do not belong together
    (a class member or server the site does not have)."""
    settings = settings or Settings()
    if settings.weight_by not in ("osts", "servers"):
        raise _err("E-USAGE", f"weight_by must be 'osts' or 'servers', not {settings.weight_by!r}")
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
        raise _err("E-ANALYZE-PLAN", f"server {bad.name} is on {bad.net}, not a storage net")
    site_servers = {s.name: s for s in site.servers}
    missing = [s for s in servers if s not in site_servers]
    if missing:
        raise _err(
            "E-ANALYZE-PLAN",
            f"the plan has servers the inventory does not: "
            f"{nodes.fold(missing)} (plan from another site?)",
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
            raise _err(
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
    crows = _table_rows(
        "client",
        [(cc.net, cc.routes) for cc in plan.client_classes],
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
        [(sr.net, sr.routes) for sr in plan.server_routes],
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
    )
    findings.extend(_coverage_findings(ix))
    object.__setattr__(ix, "findings", tuple(findings))
    return ix


def _table_rows(
    side: str,
    tables: Sequence[tuple[str, tuple[Route, ...]]],
    target_id: dict[str, int],
    router_nets: list[frozenset[str]],
    nid_router: dict[str, int],
    gw_net: dict[str, str],
    routers: tuple[str, ...],
    findings: list[Finding],
) -> _Rows:
    """Rows (key, router, priority, dead reason) of route tables; table ``t``'s route to net
    ``n`` gets key ``t * len(target_id) + target_id[n]``.  Routes dead on paper and hop counts
    other than 1 are added to ``findings``, counted per (reason, gateway, net)."""
    width = len(target_id)
    # stdlib arrays, not lists: a plan can hold millions of routes
    keys, rtrs, prios, reasons = array("q"), array("q"), array("q"), array("q")
    hop_issues: dict[tuple[str, int], int] = defaultdict(int)
    dead: dict[tuple[int, str, str, str], int] = defaultdict(int)
    for ti, (local, routes) in enumerate(tables):
        base = ti * width
        for r in routes:
            ni = target_id.get(r.net)
            if ni is None:
                continue
            ri = nid_router.get(r.gateway, -1)
            reason = _route_reason(ri, router_nets, r.net, local, gw_net, r.gateway)
            keys.append(base + ni)
            rtrs.append(ri)
            prios.append(r.priority)
            reasons.append(reason)
            if reason:
                dead[(reason, r.gateway, r.net, local)] += 1
            if r.hop != 1:
                hop_issues[(r.net, r.hop)] += 1
    for (reason, gw, net, loc), count in sorted(dead.items()):
        findings.append(
            Finding(
                "route-dead-on-paper",
                f"{side} route to {net}: {_reason_text(reason, gw, net, loc, routers, nid_router)}",
                count,
            )
        )
    for (net, hop), count in sorted(hop_issues.items()):
        findings.append(Finding("route-hop", _hop_text(side, net, hop), count))
    return _rows(keys, rtrs, prios, reasons)


def _route_reason(
    ri: int,
    router_nets: list[frozenset[str]],
    net: str,
    local: str,
    gw_net: dict[str, str],
    gateway: str,
) -> int:
    if ri < 0:
        return 1
    if net not in router_nets[ri]:
        return 2
    if local not in router_nets[ri]:
        return 3
    on = gw_net.get(gateway)
    if on is None:
        try:
            on = gw_net[gateway] = nodes.canonical_net(gateway.rpartition("@")[2])
        except nodes.NodeSyntaxError:
            on = gw_net[gateway] = ""
    return 0 if on == local else 4


def _reason_text(
    reason: int, gw: str, net: str, local: str, routers: tuple[str, ...], nid_router: dict[str, int]
) -> str:
    ri = nid_router.get(gw, -1)
    return _DEAD_REASONS[reason].format(
        gw=gw, router=routers[ri] if ri >= 0 else "?", net=net, local=local
    )


def _hop_text(side: str, net: str, hop: int) -> str:
    if hop < 0:
        return (
            f"{side} route(s) to {net} have no hop count (LNet reads it as undefined, -1): "
            "the avoid_asym_router_failure check may not apply, so the route stays up when "
            "the gateway's far interface is down; declare hop 1"
        )
    return (
        f"{side} route(s) to {net} declare hop {hop}: a fine-grained route is single-hop, and "
        "LNet then skips the check that the gateway's far interface is alive"
    )


def _rows(keys: array[int], rtrs: array[int], prios: array[int], reasons: array[int]) -> _Rows:
    k = _ints(keys)
    order = np.argsort(k, kind="stable")
    return _Rows(k[order], _ints(rtrs)[order], _ints(prios)[order], (_ints(reasons) == 0)[order])


def _ints(a: array[int]) -> IntArray:
    return np.frombuffer(a, dtype=np.int64) if len(a) else np.zeros(0, dtype=np.int64)


def _coverage_findings(ix: PlanIndex) -> list[Finding]:
    """Pairs whose best declared priority is dead on paper, or that have no live route."""
    out: list[Finding] = []
    for side, rows, nkeys in (
        ("client", ix.crows, len(ix.classes) * len(ix.nets)),
        ("server", ix.srows, len(ix.sgroups) * len(ix.client_nets)),
    ):
        if not nkeys:
            continue
        declared = _group_min(rows.key, rows.prio, nkeys, np.ones(len(rows.key), dtype=bool))
        planned = _group_min(rows.key, rows.prio, nkeys, rows.ok)
        if side == "client":
            expected = np.repeat(ix.class_count > 0, len(ix.nets))
        else:
            expected = np.repeat(ix.sgroup_size > 0, len(ix.client_nets))
        none = np.nonzero(expected & (planned == _NO_PRIO))[0]
        worse = np.nonzero((planned != _NO_PRIO) & (planned > declared))[0]
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
            names = [_pair_name(ix, side, int(k)) for k in keys[:5]]
            more = f" (and {len(keys) - 5} more)" if len(keys) > 5 else ""
            listed = "; ".join(text.format(a=a, b=b) for a, b in names)
            out.append(Finding(kind, f"{side} side: {listed}{more}", len(keys)))
    return out


def _pair_name(ix: PlanIndex, side: str, key: int) -> tuple[str, str]:
    if side == "client":
        c, n = divmod(key, len(ix.nets))
        return ix.classes[c], ix.nets[n]
    g, k = divmod(key, len(ix.client_nets))
    return ix.sgroups[g], ix.client_nets[k]


# ============================================================================ route evaluation


def _group_min(key: IntArray, val: IntArray, nkeys: int, mask: BoolArray) -> IntArray:
    out = np.full(nkeys, _NO_PRIO, dtype=np.int64)
    if mask.any():
        np.minimum.at(out, key[mask], val[mask])
    return out


@dataclass(frozen=True, eq=False)
class _State:
    planned: IntArray  # best priority alive on paper, per key
    planned_n: IntArray  # gateways at that priority
    live: IntArray  # best priority alive now
    live_n: IntArray
    active: BoolArray  # per row: carries traffic now


def _evaluate(rows: _Rows, nkeys: int, failed: BoolArray) -> _State:
    alive = rows.ok & ~failed[np.maximum(rows.router, 0)]
    planned = _group_min(rows.key, rows.prio, nkeys, rows.ok)
    live = _group_min(rows.key, rows.prio, nkeys, alive)
    at_planned = rows.ok & (rows.prio == planned[rows.key])
    active = alive & (rows.prio == live[rows.key])
    return _State(
        planned,
        np.bincount(rows.key[at_planned], minlength=nkeys),
        live,
        np.bincount(rows.key[active], minlength=nkeys),
        active,
    )


def _status(st: _State) -> npt.NDArray[np.str_]:
    status = np.full(len(st.live), OK, dtype=object)
    status[st.live_n < st.planned_n] = DEGRADED
    status[st.live > st.planned] = FALLBACK
    status[(st.live == _NO_PRIO) & (st.planned != _NO_PRIO)] = LOST
    return status


def resolve_failures(plan: Plan, names: Iterable[str]) -> tuple[str, ...]:
    """Router names for ``--fail`` arguments: a router, a leaf label (``core1/L01``) or switch
    name (all its routers), a storage net (its priority-0 routers) or a group name (the same).
    Raises ``InputError`` for a name that is none of these."""
    routers = [r.name for r in plan.routers]
    leaf = {r.name: r.leaf for r in plan.routers}
    out: set[str] = set()
    unknown: list[str] = []
    for name in names:
        if name in leaf:
            out.add(name)
            continue
        by_leaf = [r for r in routers if leaf[r] == name or leaf[r].startswith(name + "/")]
        if by_leaf:
            out.update(by_leaf)
            continue
        try:
            canon = nodes.canonical_net(name)
        except nodes.NodeSyntaxError:
            canon = ""
        nets = [n for n in plan.storage_nets() if n.name == canon or n.group == name]
        if nets:
            for n in nets:
                out.update(n.primary_routers)
            continue
        unknown.append(name)
    if unknown:
        raise _err(
            "E-FAIL-NAME",
            f"--fail {', '.join(unknown)}: not a router, leaf, switch, "
            "storage net or group of this plan",
        )
    return tuple(r for r in routers if r in out)


@dataclass(frozen=True)
class PairStatus:
    """One (sender, destination net) pair that a failure hurts."""

    side: str  # client | server
    who: str  # class name, or the server group (folded)
    members: int  # clients in the class / servers in the group
    net: str
    status: str  # degraded | fallback | lost
    planned_priority: int
    live_priority: int | None
    planned_gateways: int
    live_gateways: int


@dataclass(frozen=True)
class FailureReport:
    failed: tuple[str, ...]
    pairs: tuple[PairStatus, ...]  # every hurt pair, worst first
    counts: dict[str, dict[str, int]]  # side -> status -> pairs
    weighted: dict[str, dict[str, int]]  # side -> status -> members x nets


def failure_report(ix: PlanIndex, failed: Sequence[str]) -> FailureReport:
    """Which pairs lose their planned routes when ``failed`` routers are down."""
    mask = _failed_mask(ix, failed)
    pairs: list[PairStatus] = []
    counts: dict[str, dict[str, int]] = {}
    weighted: dict[str, dict[str, int]] = {}
    for side, rows, nkeys, width, size in _sides(ix):
        st = _evaluate(rows, nkeys, mask)
        status = _status(st)
        counts[side] = {s: 0 for s in (DEGRADED, FALLBACK, LOST)}
        weighted[side] = {s: 0 for s in (DEGRADED, FALLBACK, LOST)}
        hurt = np.nonzero(status != OK)[0]
        for k in hurt.tolist():
            s = str(status[k])
            who_i, net_i = divmod(k, width)
            members = int(size[who_i])
            counts[side][s] += 1
            weighted[side][s] += members
            pairs.append(
                PairStatus(
                    side,
                    ix.classes[who_i] if side == "client" else ix.sgroups[who_i],
                    members,
                    ix.nets[net_i] if side == "client" else ix.client_nets[net_i],
                    s,
                    int(st.planned[k]),
                    None if st.live[k] == _NO_PRIO else int(st.live[k]),
                    int(st.planned_n[k]),
                    int(st.live_n[k]),
                )
            )
    rank = {LOST: 0, FALLBACK: 1, DEGRADED: 2}
    pairs.sort(key=lambda p: (rank[p.status], p.side, p.net, p.who))
    return FailureReport(tuple(failed), tuple(pairs), counts, weighted)


def _sides(ix: PlanIndex) -> list[tuple[str, _Rows, int, int, IntArray]]:
    return [
        ("client", ix.crows, len(ix.classes) * len(ix.nets), len(ix.nets), ix.class_count),
        (
            "server",
            ix.srows,
            len(ix.sgroups) * len(ix.client_nets),
            len(ix.client_nets),
            ix.sgroup_size,
        ),
    ]


def _failed_mask(ix: PlanIndex, failed: Sequence[str]) -> BoolArray:
    mask = np.zeros(max(len(ix.routers), 1), dtype=bool)
    for name in failed:
        mask[ix.router_id(name)] = True
    return mask


@dataclass(frozen=True)
class SingleFailure:
    """What one router's failure does, in members x nets (clients x storage nets for the
    client side, servers x client nets for the server side)."""

    router: str
    lost: int
    fallback: int
    degraded: int
    server_lost: int
    server_fallback: int


@dataclass(frozen=True)
class NMinus1:
    """Every single-router failure, summarized; ``worst`` by (lost, fallback, degraded)."""

    worst: SingleFailure | None
    routers: tuple[SingleFailure, ...]
    routers_losing_a_net: int  # routers whose failure leaves some pair without a route


def n_minus_1(ix: PlanIndex) -> NMinus1:
    """Fail each router alone (vectorized: a pair is lost when every route alive on paper goes
    through that router, falls back when every planned-priority route does)."""
    R = len(ix.routers)
    res: dict[str, dict[str, IntArray]] = {}
    for side, rows, nkeys, width, size in _sides(ix):
        st = _evaluate(rows, nkeys, np.zeros(max(R, 1), dtype=bool))
        ok = rows.ok & (rows.router >= 0)
        key = rows.key[ok]
        rtr = rows.router[ok]
        at_planned = rows.prio[ok] == st.planned[key]
        total = np.bincount(key, minlength=nkeys)
        # routes per (pair, router); a gateway may appear at two priorities
        pr = key * max(R, 1) + rtr
        uniq, inv = np.unique(pr, return_inverse=True)
        k_all = np.bincount(inv, minlength=len(uniq))
        k_planned = np.bincount(
            inv, weights=at_planned.astype(np.float64), minlength=len(uniq)
        ).astype(np.int64)
        pkey, prtr = np.divmod(uniq, max(R, 1))
        weight = size[pkey // width]
        lost = k_all == total[pkey]
        fallback = ~lost & (k_planned == st.planned_n[pkey])
        degraded = ~lost & ~fallback & (k_planned > 0)
        res[side] = {
            name: np.bincount(prtr[m], weights=weight[m], minlength=R).astype(np.int64)
            for name, m in (("lost", lost), ("fallback", fallback), ("degraded", degraded))
        }
    out = tuple(
        SingleFailure(
            ix.routers[r],
            int(res["client"]["lost"][r]),
            int(res["client"]["fallback"][r]),
            int(res["client"]["degraded"][r]),
            int(res["server"]["lost"][r]),
            int(res["server"]["fallback"][r]),
        )
        for r in range(R)
    )
    worst = max(
        out,
        key=lambda s: (s.lost, s.server_lost, s.fallback, s.server_fallback, s.degraded),
        default=None,
    )
    if worst is not None and not (
        worst.lost or worst.server_lost or worst.fallback or worst.server_fallback or worst.degraded
    ):
        worst = None
    # ties: max() keeps the first, i.e. the lowest router index (plan order)
    return NMinus1(worst, out, sum(1 for s in out if s.lost or s.server_lost))


# ============================================================================ traffic


@dataclass(frozen=True, eq=False)
class _Traffic:
    """Per-row flows: writes client -> router, reads router -> client.

    ``w_client[i]`` gets ``w_matrix[w_key[i], r]`` flows to router r (likewise reads)."""

    w_client: IntArray
    w_key: IntArray
    w_matrix: FloatArray
    r_client: IntArray
    r_key: IntArray
    r_matrix: FloatArray
    w_server: FloatArray  # (S, R) writes: flows to server s through router r
    v_server: FloatArray  # (S, R) reads: flows from server s through router r
    served_w: float
    served_r: float
    lost_w: float
    lost_r: float


@dataclass(frozen=True, eq=False)
class Shares:
    """The routes that carry traffic now, one row each, sorted by pair key (``sender * width +
    destination net``): the router and the share of the pair's traffic it takes (1/k for each
    of k gateways at the best live priority)."""

    key: IntArray
    router: IntArray
    share: FloatArray
    width: int
    first: IntArray  # per pair key: index of its first row (len = keys + 1)

    def rows_of(self, keys: IntArray) -> tuple[IntArray, IntArray]:
        """For pair keys: (position in ``keys``, row index) of every row of each key."""
        return self.rows_in(keys, keys + 1)

    def rows_in(self, lo_key: IntArray, hi_key: IntArray) -> tuple[IntArray, IntArray]:
        """For key ranges ``[lo_key[i], hi_key[i])``: (i, row index) of every row in each."""
        lo = self.first[lo_key]
        counts = self.first[hi_key] - lo
        owner = np.repeat(np.arange(len(lo), dtype=np.int64), counts)
        offset = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts
        )
        return owner, np.repeat(lo, counts) + offset


def _shares(rows: _Rows, st: _State, nkeys: int, width: int) -> Shares:
    a = st.active
    key = rows.key[a]
    share = 1.0 / np.maximum(st.live_n[key], 1).astype(np.float64)
    first = np.searchsorted(key, np.arange(nkeys + 1, dtype=np.int64)).astype(np.int64)
    return Shares(key, rows.router[a], share, width, first)


def client_shares(ix: PlanIndex, failed: Sequence[str] = ()) -> Shares:
    """Client-side routes carrying traffic (key ``class * len(nets) + net``) with ``failed``
    routers down."""
    nkeys = len(ix.classes) * len(ix.nets)
    st = _evaluate(ix.crows, nkeys, _failed_mask(ix, failed))
    return _shares(ix.crows, st, nkeys, len(ix.nets))


def best_gateways(ix: PlanIndex, cls: int, net: int) -> tuple[str, ...]:
    """Router names class ``cls`` uses for storage net ``net`` with every router up."""
    rows = ix.crows
    key = cls * len(ix.nets) + net
    lo, hi = (int(v) for v in np.searchsorted(rows.key, [key, key + 1]))
    ok = rows.ok[lo:hi]
    if not ok.any():
        return ()
    prio = rows.prio[lo:hi]
    best = prio[ok].min()
    sel = rows.router[lo:hi][ok & (prio == best)]
    return tuple(sorted({ix.routers[r] for r in sel.tolist()}))


def _dense(owner: IntArray, col: IntArray, w: FloatArray, nrows: int, ncols: int) -> FloatArray:
    flat = np.bincount(owner * ncols + col, weights=w, minlength=nrows * ncols)
    return np.asarray(flat, dtype=np.float64).reshape(nrows, ncols)


def _traffic(ix: PlanIndex, mask: BoolArray, workload: Workload | None) -> _Traffic:
    R = len(ix.routers)
    nnet, ncnet = len(ix.nets), len(ix.client_nets)
    C, G, S = len(ix.classes), len(ix.sgroups), len(ix.servers)
    cst = _evaluate(ix.crows, C * nnet, mask)
    sst = _evaluate(ix.srows, G * ncnet, mask)
    csh = _shares(ix.crows, cst, C * nnet, nnet)
    ssh = _shares(ix.srows, sst, G * ncnet, ncnet)
    # server s -> client net k: router shares (none when the server has no route table)
    sg = ix.server_group
    skeys = (np.maximum(sg, 0)[:, None] * ncnet + np.arange(ncnet)[None, :]).reshape(-1)
    owner, row = ssh.rows_of(skeys)
    keep = (sg >= 0)[owner // max(ncnet, 1)]
    srv_share = _dense(owner[keep], ssh.router[row[keep]], ssh.share[row[keep]], S * ncnet, R)
    srv_share = srv_share.reshape(S, ncnet, R)
    n = len(ix.site.clients)
    c_cls, c_net = np.divmod(csh.key, max(nnet, 1))
    if workload is None:
        nf = ix.net_flows
        w_matrix = _dense(c_cls, csh.router, csh.share * nf[c_net], C, R) / max(n, 1)
        r_matrix = np.einsum("skr,s->kr", srv_share, ix.server_flows) / max(n, 1)
        w_client = np.nonzero(ix.client_class >= 0)[0].astype(np.int64)
        w_key = ix.client_class[w_client]
        r_client = np.nonzero(ix.client_cnet >= 0)[0].astype(np.int64)
        r_key = ix.client_cnet[r_client]
        members = np.bincount(ix.client_class[ix.client_class >= 0], minlength=C)
        class_frac = members / max(n, 1)
        # per unit of a net's flows, the part each router carries
        u_net = _dense(c_net, csh.router, csh.share * class_frac[c_cls], nnet, R)
        w_server = u_net[ix.server_net] * ix.server_flows[:, None]
        cnet_frac = np.bincount(ix.client_cnet[ix.client_cnet >= 0], minlength=ncnet) / max(n, 1)
        v_server = np.einsum("skr,k,s->sr", srv_share, cnet_frac, ix.server_flows)
        # what is lost: the share of pairs with no live gateway
        has_w = (cst.live_n > 0).reshape(C, nnet)
        lost_w = float((class_frac[:, None] * nf[None, :] * ~has_w).sum())
        has_r = srv_share.sum(axis=2) > 0  # (S, ncnet)
        lost_r = float((cnet_frac[None, :] * ix.server_flows[:, None] * ~has_r).sum())
    else:
        sidx = np.asarray([ix.server_id(s) for s in workload.servers], dtype=np.int64)
        cl = np.asarray(workload.clients, dtype=np.int64)
        fl = np.asarray(workload.flows, dtype=np.float64)
        P = len(cl)
        cls = ix.client_class[cl]
        kn = ix.client_cnet[cl]
        net = ix.server_net[sidx]
        owner, row = csh.rows_of(np.maximum(cls, 0) * nnet + net)
        keep = cls[owner] >= 0
        owner, row = owner[keep], row[keep]
        w_matrix = _dense(owner, csh.router[row], csh.share[row] * fl[owner], P, R)
        rrow = np.where((kn >= 0)[:, None], srv_share[sidx, np.maximum(kn, 0)], 0.0)
        r_matrix = rrow * fl[:, None]
        w_client = r_client = cl
        w_key = r_key = np.arange(P, dtype=np.int64)
        w_server = np.zeros((S, R))
        np.add.at(w_server, sidx, w_matrix)
        v_server = np.zeros((S, R))
        np.add.at(v_server, sidx, r_matrix)
        served = np.bincount(owner, minlength=P) > 0
        lost_w = float(fl[~served].sum())
        lost_r = float(fl[rrow.sum(axis=1) == 0].sum())
    served_w = float(w_matrix[w_key].sum()) if len(w_key) else 0.0
    served_r = float(r_matrix[r_key].sum()) if len(r_key) else 0.0
    return _Traffic(
        w_client,
        w_key,
        w_matrix,
        r_client,
        r_key,
        r_matrix,
        w_server,
        v_server,
        served_w,
        served_r,
        lost_w,
        lost_r,
    )


# ---------------------------------------------------------------------------- storage fabric


@dataclass(frozen=True)
class LeafLoad:
    leaf: str
    uplinks: int
    up: float  # flows leaving the leaf through its uplinks
    down: float  # flows entering it


@dataclass(frozen=True)
class FabricPhase:
    """One direction of bulk traffic on the storage fabric (flows)."""

    served: float  # flows that reach their destination
    crossing: float  # flows whose router and server are on different leaf modules
    inter_switch: float  # of those, flows between two different switches
    fraction: float  # crossing / served
    max_uplink: float  # flows on the most loaded uplink (one direction)
    mean_uplink: float  # mean over the uplinks (both directions) of the leaves in use
    max_leaf: str
    leaves: tuple[LeafLoad, ...]

    @property
    def imbalance(self) -> float:
        return self.max_uplink / self.mean_uplink if self.mean_uplink else 0.0


@dataclass(frozen=True)
class FabricReport:
    writes: FabricPhase  # client -> server: router leaf up, server leaf down
    reads: FabricPhase  # server -> client
    crossing_routes: int  # (router, server) pairs used at the best priority across the spine
    routes: int  # (router, server) pairs used at the best priority


def _leaf_uplinks(site: Site, label: str) -> int:
    sw_name, _, leaf_name = label.partition("/")
    sw = site.switch(sw_name)
    leaf = sw.leaf(leaf_name) if sw is not None else None
    return max(int(leaf.uplinks), 1) if leaf is not None and leaf.uplinks else 1


def _switch(label: str) -> str:
    return label.partition("/")[0]


def _fabric(ix: PlanIndex, tr: _Traffic) -> FabricReport:
    rleaf = list(ix.router_leaf)
    sleaf = list(ix.server_leaf)
    leaves = sorted(set(rleaf) | set(sleaf))
    lid = {lf: i for i, lf in enumerate(leaves)}
    rl = np.asarray([lid[x] for x in rleaf], dtype=np.int64)
    sl = np.asarray([lid[x] for x in sleaf], dtype=np.int64)
    cross = sl[:, None] != rl[None, :]  # (S, R)
    switches = sorted({_switch(x) for x in leaves})
    rsw = np.asarray([switches.index(_switch(x)) for x in rleaf], dtype=np.int64)
    ssw = np.asarray([switches.index(_switch(x)) for x in sleaf], dtype=np.int64)
    inter = ssw[:, None] != rsw[None, :]
    w_sr = tr.w_server
    phases = []
    for flows_sr in (w_sr, tr.v_server):
        x = flows_sr * cross
        served = float(flows_sr.sum())
        crossing = float(x.sum())
        inter_sw = float((flows_sr * inter).sum())
        router_side = np.bincount(rl, weights=x.sum(axis=0), minlength=len(leaves))
        server_side = np.bincount(sl, weights=x.sum(axis=1), minlength=len(leaves))
        phases.append((served, crossing, inter_sw, router_side, server_side))
    uplinks = np.asarray([_leaf_uplinks(ix.site, lf) for lf in leaves], dtype=np.float64)
    out = []
    for i, (served, crossing, inter_sw, router_side, server_side) in enumerate(phases):
        # writes leave the router's leaf and enter the server's; reads the other way round
        up, down = (router_side, server_side) if i == 0 else (server_side, router_side)
        per_up = np.maximum(up, down) / uplinks
        mean = float((up + down).sum() / (2 * uplinks.sum())) if len(leaves) else 0.0
        top = int(np.argmax(per_up)) if len(leaves) else 0
        out.append(
            FabricPhase(
                served,
                crossing,
                inter_sw,
                crossing / served if served else 0.0,
                float(per_up[top]) if len(leaves) else 0.0,
                mean,
                leaves[top] if len(leaves) and per_up[top] > 0 else "",
                tuple(
                    LeafLoad(lf, int(uplinks[j]), float(up[j]), float(down[j]))
                    for j, lf in enumerate(leaves)
                ),
            )
        )
    used = w_sr > 0
    return FabricReport(out[0], out[1], int((used & cross).sum()), int(used.sum()))


# ---------------------------------------------------------------------------- torus


@dataclass(frozen=True)
class LinkStats:
    """Flows per directed torus link for one phase."""

    max: float
    p99: float
    mean: float  # over every directed link of the torus
    used: int  # links carrying any flow
    links: int
    saturated: int  # links whose flows exceed link_mb_s / ost_mb_s
    volume: float  # sum over links = sum over flows of flow x hops
    top: tuple[tuple[str, float], ...]  # the ten most loaded links, "(x,y,z)X+"


@dataclass(frozen=True)
class RouterUse:
    """A router on the torus: clients it serves at the best live priority, flows it takes in
    (writes) and sends out (reads), and how those use its six links (by neighbour side)."""

    name: str
    coords: tuple[int, int, int]
    clients: int
    writes: float
    reads: float
    writes_in: tuple[float, ...]  # per port, PORTS order
    reads_out: tuple[float, ...]


@dataclass(frozen=True)
class TorusReport:
    dims: tuple[int, int, int]
    routing: str
    saturation: float
    writes: LinkStats
    reads: LinkStats
    routers: tuple[RouterUse, ...]


def _link_stats(loads: FloatArray, saturation: float) -> LinkStats:
    flat = loads.reshape(-1)
    order = np.lexsort((np.arange(len(flat)), -flat))[:10]
    shape = loads.shape
    top = []
    for i in order.tolist():
        if flat[i] <= 0:
            break
        x, y, z, d = np.unravel_index(i, shape)
        top.append((topology.Link(int(x), int(y), int(z), int(d)).name, _r(flat[i])))
    return LinkStats(
        _r(flat.max(initial=0.0)),
        _r(np.percentile(flat, 99)) if len(flat) else 0.0,
        _r(flat.mean()) if len(flat) else 0.0,
        int((flat > 1e-12).sum()),
        len(flat),
        int((flat > saturation + 1e-9).sum()),
        _r(flat.sum()),
        tuple(top),
    )


#: Flows per ``link_loads`` call when per-router ports are not wanted (bounds memory).
_BATCH_FLOWS = 500_000


def _r(x: Any) -> float:
    return round(float(x), 6)


_Loads = tuple[list[FloatArray], list[FloatArray], list[FloatArray]]


def _link_loads(ix: PlanIndex, tr: _Traffic, ports: bool = True) -> _Loads | None:
    """Link loads of all flows: ([writes, reads] as (X, Y, Z, 6) arrays, per-router port use
    [writes in, reads out] as (R, 6), per-router totals).  With ``ports`` each router's flows
    go through ``topology.link_loads`` on their own, so that the links they arrive on (writes)
    and leave by (reads) can be read off at the router; without, flows are batched (same
    totals, fewer calls) and the per-port figures are zero.  None without a torus."""
    site = ix.site
    if site.torus is None or ix.router_coords is None:
        return None
    dims = site.torus.dims
    mode = site.torus.routing
    coords = np.asarray(site.clients.coords, dtype=np.int64)
    lin = np.ravel_multi_index(coords.T, dims) if len(coords) else np.zeros(0, dtype=np.int64)
    chips, chip_of = np.unique(lin, return_inverse=True)
    chip_of = chip_of.reshape(-1)
    chip_xyz = np.stack(np.unravel_index(chips, dims), axis=1).astype(np.int64)
    R = len(ix.routers)
    loads_by_phase = [np.zeros((*dims, 6)), np.zeros((*dims, 6))]
    port = [np.zeros((R, 6)), np.zeros((R, 6))]  # writes in, reads out
    total = [np.zeros(R), np.zeros(R)]
    pending: list[list[tuple[IntArray, IntArray, FloatArray]]] = [[], []]
    pending_n = [0, 0]

    def flush(phase: int) -> None:
        if not pending[phase]:
            return
        chip = np.concatenate([p[0] for p in pending[phase]])
        rtr = np.concatenate([p[1] for p in pending[phase]])
        w = np.concatenate([p[2] for p in pending[phase]])
        src, dst = chip_xyz[chip], ix.router_coords[rtr]  # type: ignore[index]
        if phase == 1:
            src, dst = dst, src
        loads_by_phase[phase] += topology.link_loads(src, dst, dims, mode, weights=w)
        pending[phase].clear()
        pending_n[phase] = 0

    for r in range(R):
        rc = ix.router_coords[r]
        for phase in (0, 1):
            client, key, mat = (
                (tr.w_client, tr.w_key, tr.w_matrix)
                if phase == 0
                else (tr.r_client, tr.r_key, tr.r_matrix)
            )
            if not len(key):
                continue
            w = mat[key, r]
            nz = w > 0
            if not nz.any():
                continue
            per_chip = np.bincount(chip_of[client[nz]], weights=w[nz], minlength=len(chips))
            sel = np.nonzero(per_chip > 0)[0]
            total[phase][r] = per_chip.sum()
            if not ports:
                pending[phase].append(
                    (
                        sel.astype(np.int64),
                        np.full(len(sel), r, dtype=np.int64),
                        np.asarray(per_chip[sel], dtype=np.float64),
                    )
                )
                pending_n[phase] += len(sel)
                if pending_n[phase] >= _BATCH_FLOWS:
                    flush(phase)
                continue
            chip_src = chip_xyz[sel]
            at = np.broadcast_to(rc, chip_src.shape)
            if phase == 0:
                loads = topology.link_loads(chip_src, at, dims, mode, weights=per_chip[sel])
                for axis in range(3):
                    for side in (0, 1):  # neighbour on the + side, then on the - side
                        nb = rc.copy()
                        nb[axis] = (nb[axis] + (1 if side == 0 else -1)) % dims[axis]
                        # arriving from the + neighbour means travelling in the - direction
                        port[0][r, 2 * axis + side] = loads[
                            nb[0], nb[1], nb[2], 2 * axis + 1 - side
                        ]
            else:
                loads = topology.link_loads(at, chip_src, dims, mode, weights=per_chip[sel])
                port[1][r] = loads[rc[0], rc[1], rc[2]]
            loads_by_phase[phase] += loads
    flush(0)
    flush(1)
    return loads_by_phase, port, total


def link_load_arrays(
    ix: PlanIndex, fail: Sequence[str] = (), workload: Workload | None = None
) -> tuple[FloatArray, FloatArray] | None:
    """Flows per directed torus link for writes (client -> router) and reads (router ->
    client), each (X, Y, Z, 6) in ``topology.DIRECTIONS`` order, with ``fail`` down: the loads
    ``analyze`` summarizes.  None when the client side is not a torus."""
    mask = _failed_mask(ix, resolve_failures(ix.plan, fail) if fail else ())
    got = _link_loads(ix, _traffic(ix, mask, workload), ports=False)
    if got is None:
        return None
    writes, reads = got[0]
    for loads in (writes, reads):
        loads[np.abs(loads) < 1e-9] = 0.0  # float residue of the difference arrays
    return writes, reads


def _torus(
    ix: PlanIndex, tr: _Traffic, settings: Settings, mask: BoolArray, ports: bool = True
) -> TorusReport | None:
    """Summaries of ``_link_loads`` (see there for ``ports``)."""
    got = _link_loads(ix, tr, ports)
    if got is None:
        return None
    site = ix.site
    assert site.torus is not None and ix.router_coords is not None
    dims = site.torus.dims
    R = len(ix.routers)
    loads_by_phase, port, total = got
    mode = site.torus.routing
    wl, rl = loads_by_phase
    w_in, r_out = port
    w_tot, r_tot = total
    # clients served: members of classes with an active route through the router
    cst = _evaluate(ix.crows, len(ix.classes) * len(ix.nets), mask)
    a = cst.active
    cls = ix.crows.key[a] // max(len(ix.nets), 1)
    pairs = np.unique(cls * max(R, 1) + ix.crows.router[a])
    served = np.bincount(pairs % max(R, 1), weights=ix.class_count[pairs // max(R, 1)], minlength=R)
    routers = tuple(
        RouterUse(
            ix.routers[r],
            (int(ix.router_coords[r][0]), int(ix.router_coords[r][1]), int(ix.router_coords[r][2])),
            int(served[r]),
            _r(w_tot[r]),
            _r(r_tot[r]),
            tuple(_r(v) for v in w_in[r]),
            tuple(_r(v) for v in r_out[r]),
        )
        for r in range(R)
    )
    return TorusReport(
        dims,
        mode,
        _r(settings.saturation),
        _link_stats(wl, settings.saturation),
        _link_stats(rl, settings.saturation),
        routers,
    )


# ============================================================================ analysis


@dataclass(frozen=True)
class Analysis:
    site: str
    strategy: str
    workload: str
    settings: Settings
    flows: float  # offered flows (writes); served + lost
    lost_writes: float  # flows with no live route (failures)
    lost_reads: float
    fabric: FabricReport
    torus: TorusReport | None
    failure: FailureReport | None  # with --fail
    n_minus_1: NMinus1 | None  # without --fail
    findings: tuple[Finding, ...]

    def as_dict(self) -> dict[str, Any]:
        return dict(plain(self))


def plain(obj: Any) -> Any:
    """``obj`` (analysis dataclasses, tuples, numpy scalars) as JSON-ready plain data."""
    if hasattr(obj, "__dataclass_fields__"):
        d = {k: plain(getattr(obj, k)) for k in obj.__dataclass_fields__}
        if isinstance(obj, FabricPhase):
            d["imbalance"] = _r(obj.imbalance)
        if isinstance(obj, Settings):
            d["saturation"] = _r(obj.saturation)
        if isinstance(obj, RouterUse):
            d["writes_in"] = dict(zip(PORTS, obj.writes_in, strict=True))
            d["reads_out"] = dict(zip(PORTS, obj.reads_out, strict=True))
        if isinstance(obj, LinkStats):
            d["top"] = [{"link": a, "flows": b} for a, b in obj.top]
        return d
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, float):
        return _r(obj)
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    return obj


def analyze(
    site: Site,
    plan: Plan,
    *,
    fail: Sequence[str] = (),
    settings: Settings | None = None,
    workload: Workload | None = None,
    index: PlanIndex | None = None,
    with_n_minus_1: bool = True,
    ports: bool = True,
    torus: bool = True,
) -> Analysis:
    """Analyze ``plan`` on ``site``: storage-fabric crossings, torus loads, failures.

    ``fail`` names routers, leaves, switches, nets or groups (see :func:`resolve_failures`);
    traffic then uses the best live priority.  Without ``fail`` the N-1 summary is computed
    (unless ``with_n_minus_1`` is False).  ``workload`` None is the uniform workload.
    ``ports`` False skips the per-router link figures (one ``link_loads`` call per router and
    phase) for batched calls: same link loads, faster; ``torus`` False skips the torus.
    Raises ``InputError`` when the plan does not match the site or a name is unknown.
    """
    settings = settings or Settings()
    ix = index or index_plan(site, plan, settings)
    failed = resolve_failures(plan, fail) if fail else ()
    mask = _failed_mask(ix, failed)
    tr = _traffic(ix, mask, workload)
    return Analysis(
        site=plan.site,
        strategy=plan.strategy,
        workload=workload.name if workload is not None else "uniform",
        settings=settings,
        flows=_r(tr.served_w + tr.lost_w),
        lost_writes=_r(tr.lost_w),
        lost_reads=_r(tr.lost_r),
        fabric=_fabric(ix, tr),
        torus=_torus(ix, tr, settings, mask, ports) if torus else None,
        failure=failure_report(ix, failed) if fail else None,
        n_minus_1=n_minus_1(ix) if (not fail and with_n_minus_1) else None,
        findings=ix.findings,
    )


def torus_loads(
    ix: PlanIndex,
    workload: Workload | None,
    settings: Settings | None = None,
    fail: Sequence[str] = (),
    ports: bool = False,
) -> TorusReport | None:
    """Just the torus part of :func:`analyze` (placement comparisons use it); per-router port
    figures only with ``ports``.  None without a torus client side."""
    settings = settings or Settings()
    mask = _failed_mask(ix, resolve_failures(ix.plan, fail) if fail else ())
    return _torus(ix, _traffic(ix, mask, workload), settings, mask, ports)


# ============================================================================ compare


@dataclass(frozen=True)
class CompareRow:
    """One strategy, side by side with the others.  Torus figures are the maximum flows on a
    directed link (writes / reads); ``placed_*`` use one client per OST placed by
    ``lnetgen.place`` (nearest free clients), ``default_*`` contiguous clients in node order,
    ``random_*`` random clients, for the same OSTs."""

    strategy: str
    error: str = ""
    nets: int = 0
    classes: int = 0
    spine_fraction: float = 0.0
    uplink_max: float = 0.0
    uplink_imbalance: float = 0.0
    uniform_write_max: float = 0.0
    uniform_read_max: float = 0.0
    uniform_write_volume: float = 0.0
    uniform_saturated: int = 0
    placed_write_max: float = 0.0
    placed_read_max: float = 0.0
    placed_write_volume: float = 0.0
    placed_read_volume: float = 0.0
    placed_saturated: int = 0
    default_write_max: float = 0.0
    default_read_max: float = 0.0
    random_write_max: float = 0.0
    random_read_max: float = 0.0
    worst_router: str = ""
    worst_lost: int = 0
    worst_fallback: int = 0
    routers_losing_a_net: int = 0
    findings: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(plain(self))


def compare(
    site: Site,
    strategies: Sequence[str] | None = None,
    settings: Settings | None = None,
    seed: int = 0,
    uniform_torus: bool = True,
) -> list[CompareRow]:
    """Solve ``site`` with every strategy (or ``strategies``) and analyze each the same way.

    ``uniform_torus`` False leaves out the torus loads of the uniform workload (the costly
    part: every client to every router); the placed/default/random loads are always computed
    on a torus site."""
    from lnetgen import place  # place builds on this module
    from lnetgen.solve import solve, strategy_names
    from lnetgen.strategies import SolveError

    settings = settings or Settings()
    rows: list[CompareRow] = []
    for name in strategies or strategy_names():
        try:
            plan = solve(site, name)
        except SolveError as exc:
            rows.append(CompareRow(name, error="; ".join(d.message for d in exc.diagnostics)[:300]))
            continue
        ix = index_plan(site, plan, settings)
        a = analyze(site, plan, settings=settings, index=ix, torus=uniform_torus)
        kw: dict[str, Any] = {}
        if a.torus is not None:
            kw.update(
                uniform_write_max=a.torus.writes.max,
                uniform_read_max=a.torus.reads.max,
                uniform_write_volume=a.torus.writes.volume,
                uniform_saturated=a.torus.writes.saturated + a.torus.reads.saturated,
            )
        if site.torus is not None and ix.router_coords is not None:
            oss = place.oss_with_osts(site, plan)
            if oss:
                cmp = place.compare_placements(
                    site, plan, oss, None, settings=settings, seed=seed, index=ix
                )
                kw.update(
                    placed_write_max=cmp.placed.writes.max,
                    placed_read_max=cmp.placed.reads.max,
                    placed_write_volume=cmp.placed.writes.volume,
                    placed_read_volume=cmp.placed.reads.volume,
                    placed_saturated=cmp.placed.writes.saturated + cmp.placed.reads.saturated,
                    default_write_max=cmp.default.writes.max,
                    default_read_max=cmp.default.reads.max,
                    random_write_max=cmp.random.writes.max,
                    random_read_max=cmp.random.reads.max,
                )
        nm = a.n_minus_1
        if nm is not None and nm.worst is not None:
            kw.update(
                worst_router=nm.worst.router,
                worst_lost=nm.worst.lost,
                worst_fallback=nm.worst.fallback,
            )
        rows.append(
            CompareRow(
                name,
                nets=len(ix.nets),
                classes=len(ix.classes),
                spine_fraction=_r(a.fabric.writes.fraction),
                uplink_max=_r(a.fabric.writes.max_uplink),
                uplink_imbalance=_r(a.fabric.writes.imbalance),
                routers_losing_a_net=nm.routers_losing_a_net if nm is not None else 0,
                findings=len(a.findings),
                **kw,
            )
        )
    return rows


__all__ = [
    "LINK_MB_S",
    "OST_MB_S",
    "PORTS",
    "Analysis",
    "CompareRow",
    "FabricPhase",
    "FabricReport",
    "FailureReport",
    "Finding",
    "LinkStats",
    "NMinus1",
    "PairStatus",
    "PlanIndex",
    "RouterUse",
    "Settings",
    "Shares",
    "SingleFailure",
    "TorusReport",
    "Workload",
    "analyze",
    "best_gateways",
    "client_shares",
    "compare",
    "failure_report",
    "index_plan",
    "input_error",
    "n_minus_1",
    "plain",
    "resolve_failures",
    "torus_loads",
]
