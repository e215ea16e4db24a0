"""What router failures do to the (sender, destination net) pairs: the pairs a given failure
hurts, and every single-router failure summarized (N-1).

A route is dead when its gateway failed (or dead on paper, see ``lnetgen.traffic.findings``).
A (client class, storage net) pair, or a (server group, client net) pair, is *lost* with no
live route, falls *back* when only a worse priority than planned is alive, and is *degraded*
with fewer live gateways at the planned one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lnetgen.traffic.index import PlanIndex
from lnetgen.traffic.routes import failed_mask
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
class FailureReport:
    failed: tuple[str, ...]
    pairs: tuple[PairStatus, ...]  # every hurt pair, worst first
    counts: dict[str, dict[str, int]]  # side -> status -> pairs
    weighted: dict[str, dict[str, int]]  # side -> status -> members x nets


def failure_report(ix: PlanIndex, failed: Sequence[str]) -> FailureReport:
    """Which pairs lose their planned routes when ``failed`` routers are down."""
    mask = failed_mask(ix, failed)
    pairs: list[PairStatus] = []
    counts: dict[str, dict[str, int]] = {}
    weighted: dict[str, dict[str, int]] = {}
    for side in ix.sides():
        st = evaluate(side.rows, side.nkeys, mask)
        status = _status(st)
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
    return FailureReport(tuple(failed), tuple(pairs), counts, weighted)


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
    lost: float  # write flows left without a live route

    @property
    def ratio(self) -> float:
        return self.flows / self.normal if self.normal else 0.0


class _WriteLoads:
    """Per-router write flows (uniform workload) under router failures, re-evaluating only the
    (client class, storage net) pairs that route through a failed router: each pair's flows
    spread over its live gateways at the best live priority, as in ``lnetgen.traffic.flows``."""

    def __init__(self, ix: PlanIndex) -> None:
        self.R = len(ix.routers)
        client = ix.sides()[0]
        self.rows, self.nkeys = client.rows, client.nkeys
        nnet = max(len(ix.nets), 1)
        members = np.bincount(ix.client_class[ix.client_class >= 0], minlength=len(ix.classes))
        frac = members / max(len(ix.site.clients), 1)
        cls, net = np.divmod(np.arange(self.nkeys, dtype=np.int64), nnet)
        self.weight = frac[cls] * ix.net_flows[net] if self.nkeys else np.zeros(0)
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

    def with_failed(self, failed: IntArray) -> npt.NDArray[np.float64]:
        """Per router, its write flows with the routers ``failed`` (indices) down."""
        keys = np.unique(
            np.concatenate(
                [
                    self.by_router_key[self.by_router_first[r] : self.by_router_first[r + 1]]
                    for r in failed.tolist()
                ]
                or [np.zeros(0, dtype=np.int64)]
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
        new = np.where(
            st.active, self.weight[keys][sub.key] / np.maximum(st.live_n[sub.key], 1), 0.0
        )
        return self.normal - self._sum(idx, self.contrib[idx]) + self._sum(idx, new)


def router_write_flows(ix: PlanIndex, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """Per router, the write flows it carries (uniform workload) with the ``mask`` routers
    down."""
    return _WriteLoads(ix).with_failed(np.nonzero(mask[: len(ix.routers)])[0])


def named_failure(ix: PlanIndex, failed: Sequence[str]) -> WorstFailure | None:
    """The busiest surviving router with the ``failed`` routers down (scope ``named``)."""
    R = len(ix.routers)
    idx = np.asarray(sorted({ix.router_id(n) for n in failed}), dtype=np.int64)
    if not R or len(idx) == R:
        return None
    loads = _WriteLoads(ix)
    load = loads.with_failed(idx)
    load[idx] = -1.0
    top = int(np.argmax(load))
    lost = round(max(float(loads.normal.sum()) - float(load[load >= 0].sum()), 0.0), 6)
    name = ",".join(ix.routers[i] for i in idx.tolist())
    return WorstFailure(
        "named", name, ix.routers[top], float(load[top]), float(loads.normal.max()), lost
    )


def worst_failures(ix: PlanIndex) -> tuple[WorstFailure, ...]:
    """For each scope (single router, single leaf module, single switch), the failure that
    loads one surviving router most.  A TOR switch is its own leaf: its scope is reported
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
    for i, name in enumerate(routers):
        scopes["router"][name] = [i]
        scopes["leaf"].setdefault(leaf.get(name, ""), []).append(i)
        if "/" in leaf.get(name, ""):
            scopes["switch"].setdefault(leaf[name].split("/")[0], []).append(i)
    out = []
    for scope, groups in scopes.items():
        best: WorstFailure | None = None
        for failed, members in groups.items():
            if len(members) == R:
                continue
            idx = np.asarray(members, dtype=np.int64)
            load = loads.with_failed(idx)
            load[idx] = -1.0
            top = int(np.argmax(load))
            flows = float(load[top])
            if best is None or flows > best.flows + 1e-9:
                lost = round(max(total - float(load[load >= 0].sum()), 0.0), 6)
                best = WorstFailure(scope, failed, routers[top], flows, normal, lost)
        if best is not None:
            out.append(best)
    return tuple(out)
