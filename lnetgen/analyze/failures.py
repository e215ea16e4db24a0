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
from lnetgen.traffic.rows import NO_PRIO, State, evaluate
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
