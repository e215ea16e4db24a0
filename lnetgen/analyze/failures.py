"""What router failures do to the (sender, destination net) pairs: the pairs a given failure
hurts, and every single-router failure summarized (N-1).

A route is dead when its gateway failed (or dead on paper, see ``lnetgen.traffic.findings``).
A failed leaf module or switch also cuts off the servers cabled to it
(``lnetgen.traffic.routes.Down``): their targets are carried by a live failover partner, or
lost (``ServerDown``), and their flows with them.
A (client class, storage net) pair, or a (server group, client net) pair, is *lost* with no
live route, falls *back* when only a worse priority than planned is alive, and is *degraded*
with fewer live gateways at the planned one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from lnetgen.traffic.index import PlanIndex
from lnetgen.traffic.routes import LOST_SERVER, carriers, failed_mask
from lnetgen.traffic.rows import NO_PRIO, Rows, State, evaluate
from lnetgen.traffic.settings import IntArray

#: Pair states, best first.
OK, DEGRADED, FALLBACK, LOST = "ok", "degraded", "fallback", "lost"


def _status(st: State) -> npt.NDArray[np.str_]:
    status = np.full(len(st.live), OK, dtype=object)
    status[st.live_n < st.planned_n] = DEGRADED
    status[st.live > st.planned] = FALLBACK
    status[(st.live == NO_PRIO) & (st.planned != NO_PRIO)] = LOST
    return status


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
class ServerDown:
    """A server a failure takes out of service: failed by name (``named``, and ``cut``), cut
    off with a failed leaf module or switch (``cut``), or on a live port but of a file system
    whose MDS is lost.  ``carried_by``: the failover partner that carries its targets now
    ('' when they are lost)."""

    name: str
    role: str  # oss | mds
    targets: int  # its OSTs (an OSS) or MDTs (an MDS)
    cut: bool
    carried_by: str
    named: bool = False


@dataclass(frozen=True)
class FailureReport:
    failed: tuple[str, ...]
    pairs: tuple[PairStatus, ...]  # every hurt pair, worst first
    counts: dict[str, dict[str, int]]  # side -> status -> pairs
    weighted: dict[str, dict[str, int]]  # side -> status -> members x nets
    #: the servers out of service (cut off with a leaf or switch, or of a file system down)
    servers: tuple[ServerDown, ...] = ()

    @property
    def lost_servers(self) -> int:
        """Servers whose targets no live server carries."""
        return sum(1 for s in self.servers if not s.carried_by)


def _servers_down(
    ix: PlanIndex, cut: Sequence[str], named: Sequence[str] = ()
) -> tuple[ServerDown, ...]:
    """The servers out of service with ``cut`` cut off (``named``: those failed by name), in
    plan order."""
    carrier = carriers(ix, cut)
    site = {s.name: s for s in ix.site.servers}
    out = []
    for i, name in enumerate(ix.servers):
        c = int(carrier[i])
        if c == i:
            continue
        s = site.get(name)
        out.append(
            ServerDown(
                name,
                s.role if s is not None else "",
                (len(s.osts) if s.role == "oss" else len(s.mdts)) if s is not None else 0,
                name in cut,
                "" if c == LOST_SERVER else ix.servers[c],
                name in named,
            )
        )
    return tuple(out)


def failure_report(
    ix: PlanIndex,
    failed: Sequence[str],
    servers: Sequence[str] = (),
    named: Sequence[str] = (),
) -> FailureReport:
    """Which pairs lose their planned routes when ``failed`` routers are down, and which
    servers go out of service with ``servers`` cut off (``named``: those of them failed by
    name rather than with their leaf module or switch).  A pair whose servers are all out of
    service (a storage net none of whose servers is up, a server group all cut off) is left
    out: there is nothing at its end to route to or from, and ``FailureReport.servers`` says
    what became of their targets."""
    mask = failed_mask(ix, failed)
    pairs: list[PairStatus] = []
    counts: dict[str, dict[str, int]] = {}
    weighted: dict[str, dict[str, int]] = {}
    out_of_service = carriers(ix, servers) != np.arange(len(ix.servers))
    # per storage net / server group: every server of it out of service
    up_net = np.bincount(ix.server_net[~out_of_service], minlength=len(ix.nets)) > 0
    grp = ix.server_group
    up_grp = np.bincount(grp[(grp >= 0) & ~out_of_service], minlength=len(ix.sgroups)) > 0
    for side in ix.sides():
        st = evaluate(side.rows, side.nkeys, mask)
        status = _status(st)
        if servers:
            ends = np.arange(side.nkeys, dtype=np.int64)
            if side.name == "client":
                gone = ~up_net[ends % max(side.width, 1)]
            else:
                gone = ~up_grp[ends // max(side.width, 1)]
            status[gone] = OK
        counts[side.name] = {s: 0 for s in (DEGRADED, FALLBACK, LOST)}
        weighted[side.name] = {s: 0 for s in (DEGRADED, FALLBACK, LOST)}
        hurt = np.nonzero(status != OK)[0]
        for k in hurt.tolist():
            s = str(status[k])
            who, net = side.pair(k)
            members = int(side.size[k // side.width])
            counts[side.name][s] += 1
            weighted[side.name][s] += members
            pairs.append(
                PairStatus(
                    side.name,
                    who,
                    members,
                    net,
                    s,
                    int(st.planned[k]),
                    None if st.live[k] == NO_PRIO else int(st.live[k]),
                    int(st.planned_n[k]),
                    int(st.live_n[k]),
                )
            )
    rank = {LOST: 0, FALLBACK: 1, DEGRADED: 2}
    pairs.sort(key=lambda p: (rank[p.status], p.side, p.net, p.who))
    return FailureReport(
        tuple(failed), tuple(pairs), counts, weighted, _servers_down(ix, servers, named)
    )


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
    for side in ix.sides():
        rows, nkeys = side.rows, side.nkeys
        st = evaluate(rows, nkeys, np.zeros(max(R, 1), dtype=bool))
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
        weight = side.size[pkey // side.width]
        lost = k_all == total[pkey]
        fallback = ~lost & (k_planned == st.planned_n[pkey])
        degraded = ~lost & ~fallback & (k_planned > 0)
        res[side.name] = {
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


@dataclass(frozen=True)
class WorstFailure:
    """The failure of one scope (a router, a leaf module, a switch) that puts the most write
    flows on one surviving router, under the uniform workload."""

    scope: str  # router | leaf | switch
    failed: str  # the router, leaf label or switch name
    router: str  # the busiest surviving router
    flows: float  # its write flows with ``failed`` down
    normal: float  # the busiest router's flows with every router up
    lost: float  # write flows to servers still in service left without a live route
    #: over every failure of the scope, the most write flows left without a live route, and
    #: the failure that leaves them
    most_lost: float = 0.0
    most_lost_failed: str = ""
    #: write flows lost with their servers (cut off with no live failover partner): no
    #: layout can route them, so they are counted apart from ``lost``, which is what a
    #: layout decides
    down: float = 0.0

    @property
    def ratio(self) -> float:
        return self.flows / self.normal if self.normal else 0.0


class _WriteLoads:
    """Per-router write flows (uniform workload) under router failures, re-evaluating only the
    (client class, storage net) pairs that route through a failed router or go to a net whose
    servers' flows changed: each pair's flows spread over its live gateways at the best live
    priority, as in ``lnetgen.traffic.flows``."""

    def __init__(self, ix: PlanIndex) -> None:
        self.ix = ix
        self.R = len(ix.routers)
        client = ix.sides()[0]
        self.rows, self.nkeys = client.rows, client.nkeys
        self.nnet = nnet = max(len(ix.nets), 1)
        members = np.bincount(ix.client_class[ix.client_class >= 0], minlength=len(ix.classes))
        self.frac = members / max(len(ix.site.clients), 1)
        self.key_cls, self.key_net = np.divmod(np.arange(self.nkeys, dtype=np.int64), nnet)
        self.net_flows = ix.net_flows
        self.weight = (
            self.frac[self.key_cls] * self.net_flows[self.key_net] if self.nkeys else np.zeros(0)
        )
        self.first = np.searchsorted(self.rows.key, np.arange(self.nkeys + 1, dtype=np.int64))
        st = evaluate(self.rows, self.nkeys, np.zeros(max(self.R, 1), dtype=bool))
        self.contrib = np.where(
            st.active, self.weight[self.rows.key] / np.maximum(st.live_n[self.rows.key], 1), 0.0
        )
        self.normal = self._sum(np.arange(len(self.rows.key)), self.contrib)
        used = self.rows.ok & (self.rows.router >= 0)
        order = np.argsort(self.rows.router[used], kind="stable")
        self.by_router_key = self.rows.key[used][order]
        self.by_router_first = np.searchsorted(
            self.rows.router[used][order], np.arange(self.R + 1, dtype=np.int64)
        )

    def _sum(self, idx: IntArray, w: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        rtr = self.rows.router[idx]
        keep = rtr >= 0
        return np.bincount(rtr[keep], weights=w[keep], minlength=self.R).astype(np.float64)

    def net_flows_with(self, cut: Sequence[str]) -> npt.NDArray[np.float64]:
        """Per storage net, the flows its servers offer with the servers ``cut`` off (their
        targets carried by a live failover partner, or lost: ``carriers``)."""
        if not cut:
            return self.net_flows
        carrier = carriers(self.ix, cut)
        up = carrier >= 0
        sf = np.bincount(
            carrier[up], weights=self.ix.server_flows[up], minlength=len(self.ix.servers)
        )
        nf = np.bincount(self.ix.server_net, weights=sf, minlength=len(self.net_flows))
        return np.asarray(nf, dtype=np.float64)

    def down(self, cut: Sequence[str]) -> tuple[float, npt.NDArray[np.float64]]:
        """The write flows lost with the servers ``cut`` (no live partner carries their
        targets), and the per-net flows the servers still in service offer."""
        nf = self.net_flows_with(cut)
        if not cut:
            return 0.0, nf
        offered = float(self.with_failed(np.zeros(0, dtype=np.int64), nf).sum())
        return max(float(self.normal.sum()) - offered, 0.0), nf

    def with_failed(
        self, failed: IntArray, net_flows: npt.NDArray[np.float64] | None = None
    ) -> npt.NDArray[np.float64]:
        """Per router, its write flows with the routers ``failed`` (indices) down and each
        storage net offering ``net_flows`` (:meth:`net_flows_with`; None: as with every
        server up)."""
        nf = self.net_flows if net_flows is None else net_flows
        moved = np.nonzero(~np.isclose(nf, self.net_flows, rtol=0.0, atol=1e-12))[0]
        changed = (moved[None, :] + self.nnet * np.arange(len(self.frac))[:, None]).reshape(-1)
        keys = np.unique(
            np.concatenate(
                [
                    self.by_router_key[self.by_router_first[r] : self.by_router_first[r + 1]]
                    for r in failed.tolist()
                ]
                + [changed[changed < self.nkeys].astype(np.int64)]
            )
        )
        lo, hi = self.first[keys], self.first[keys + 1]
        counts = hi - lo
        idx = np.repeat(lo, counts) + (
            np.arange(int(counts.sum()), dtype=np.int64)
            - np.repeat(np.cumsum(counts) - counts, counts)
        )
        sub = Rows(
            np.repeat(np.arange(len(keys), dtype=np.int64), counts),
            self.rows.router[idx],
            self.rows.prio[idx],
            self.rows.ok[idx],
        )
        mask = np.zeros(max(self.R, 1), dtype=bool)
        mask[failed] = True
        st = evaluate(sub, len(keys), mask)
        weight = self.frac[self.key_cls[keys]] * nf[self.key_net[keys]]
        new = np.where(st.active, weight[sub.key] / np.maximum(st.live_n[sub.key], 1), 0.0)
        return self.normal - self._sum(idx, self.contrib[idx]) + self._sum(idx, new)


def router_write_flows(ix: PlanIndex, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """Per router, the write flows it carries (uniform workload) with the ``mask`` routers
    down."""
    return _WriteLoads(ix).with_failed(np.nonzero(mask[: len(ix.routers)])[0])


def named_failure(
    ix: PlanIndex, failed: Sequence[str], servers: Sequence[str] = ()
) -> WorstFailure | None:
    """The busiest surviving router with the ``failed`` routers down and the ``servers`` cut
    off (scope ``named``)."""
    R = len(ix.routers)
    idx = np.asarray(sorted({ix.router_id(n) for n in failed}), dtype=np.int64)
    if not R or len(idx) == R:
        return None
    loads = _WriteLoads(ix)
    down, nf = loads.down(servers)
    load = loads.with_failed(idx, nf)
    load[idx] = -1.0
    top = int(np.argmax(load))
    total = float(loads.normal.sum()) - down
    lost = round(max(total - float(load[load >= 0].sum()), 0.0), 6)
    name = ",".join(ix.routers[i] for i in idx.tolist())
    return WorstFailure(
        "named", name, ix.routers[top], float(load[top]), float(loads.normal.max()), lost,
        down=round(down, 6),
    )  # fmt: skip


def worst_failures(ix: PlanIndex) -> tuple[WorstFailure, ...]:
    """For each scope (single router, single leaf module, single switch), the failure that
    loads one surviving router most.  A leaf module or switch fails physically: the servers
    cabled to it go with its routers (``lnetgen.traffic.routes.Down``), their flows carried
    by a live failover partner or lost.  A TOR switch is its own leaf: its scope is reported
    once, as ``leaf``."""
    R = len(ix.routers)
    if not R:
        return ()
    loads = _WriteLoads(ix)
    routers = list(ix.routers)
    leaf = {r.name: r.leaf for r in ix.plan.routers}
    normal = float(loads.normal.max())
    total = float(loads.normal.sum())
    scopes: dict[str, dict[str, list[int]]] = {"router": {}, "leaf": {}, "switch": {}}
    cut: dict[str, dict[str, list[str]]] = {"router": {}, "leaf": {}, "switch": {}}
    for i, name in enumerate(routers):
        scopes["router"][name] = [i]
        scopes["leaf"].setdefault(leaf.get(name, ""), []).append(i)
        if "/" in leaf.get(name, ""):
            scopes["switch"].setdefault(leaf[name].split("/")[0], []).append(i)
    for name, label in zip(ix.servers, ix.server_leaf, strict=True):
        scopes["leaf"].setdefault(label, [])
        cut["leaf"].setdefault(label, []).append(name)
        if "/" in label:
            scopes["switch"].setdefault(label.split("/")[0], [])
            cut["switch"].setdefault(label.split("/")[0], []).append(name)
    out = []
    for scope, groups in scopes.items():
        best: WorstFailure | None = None
        most, most_failed = 0.0, ""
        for failed, members in groups.items():
            if len(members) == R:
                continue
            idx = np.asarray(members, dtype=np.int64)
            down, nf = loads.down(cut[scope].get(failed, ()))
            load = loads.with_failed(idx, nf)
            load[idx] = -1.0
            top = int(np.argmax(load))
            flows = float(load[top])
            lost = round(max(total - down - float(load[load >= 0].sum()), 0.0), 6)
            if lost > most + 1e-9:
                most, most_failed = lost, failed
            if best is None or flows > best.flows + 1e-9:
                best = WorstFailure(
                    scope, failed, routers[top], flows, normal, lost, down=round(down, 6)
                )
        if best is not None:
            out.append(replace(best, most_lost=most, most_lost_failed=most_failed))
    return tuple(out)
