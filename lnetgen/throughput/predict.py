"""Predicted bandwidth of a workload on a plan: every rank's path, the fair share it gets, and
the aggregate as IOR reports it.

A write subflow goes client -> (torus links, dimension-order) -> router -> router's storage
port -> [leaf uplinks -> leaf downlinks, when the router and the server sit on different leaf
modules of a director] -> server port -> OSS -> OST; a read goes the other way, through the
router the *server's* route table picks.  The router is each of the client's (server's)
gateways at the best live priority, the rank's data shared equally among them (LNet
round-robin).  Every component whose rate ``Site.rates`` gives is a resource of that capacity;
the others do not limit anything and are listed as ``n/a`` -- a prediction with an unknown
rate on the path is an upper bound on what that rate would allow, and says so.

A router or server with Multi-Rail ports (``rails``) has one port resource of ``1 + rails``
links: LNet spreads a peer's traffic over all its NIs, so the links are pooled like a leaf's
uplinks.

On a dragonfly client side a subflow also crosses the local links between its client's and its
router's switches (one group) or the global links between their groups (``_dragonfly_links``).

With OpenSM's simulated routes (``lnetgen.throughput.fabric``) a fat-tree compute fabric's
links are resources too (``fabric_routes``), and a crossing of the storage fabric takes the
spine links its route names (``storage_routes``) instead of the modules' pooled uplinks.

Not modelled (the reproduction table in docs/throughput.md says where it matters): without
those routes, the compute fabric of a fat-tree client side and the storage fabric's spine
choice (a leaf's uplinks are pooled); MDS traffic, Lustre client and server software limits,
head-of-line blocking inside a switch, read-ahead and write-back caches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.rates import Rates
from lnetgen.throughput.fabric import FabricRoutes
from lnetgen.throughput.links import (
    dragonfly_links,
    fabric_links,
    leaf_uplinks,
    port_caps,
    spine_links,
    uplink_caps,
)
from lnetgen.throughput.share import FULL, Problem, Shares, Torus, completion, max_min
from lnetgen.throughput.workload import (
    MAX_SUBFLOWS,
    Ranks,
    WorkloadSpec,
    build_ranks,
    with_background,
)
from lnetgen.traffic import IntArray, PlanIndex, index_plan
from lnetgen.traffic.routes import failed_mask, resolve_failures, shares
from lnetgen.traffic.rows import evaluate
from lnetgen.traffic.settings import FloatArray, rounded

#: Resource kinds, in the order ids are numbered.
KINDS = (
    "injection",
    "fabric link",
    "local link",
    "global link",
    "router",
    "router port",
    "leaf uplinks",
    "leaf downlinks",
    "spine link",
    "server port",
    "oss",
    "ost",
)
#: The ``Rates`` field behind each kind (uplinks: per link, times the leaf's uplink count).
RATE_OF = {
    "injection": "injection",
    "fabric link": "fabric_link",
    "local link": "local_link",
    "global link": "global_link",
    "router": "router",
    "router port": "ib_link",
    "leaf uplinks": "uplink",
    "leaf downlinks": "uplink",
    "spine link": "uplink",
    "server port": "ib_link",
    "oss": "oss",
    "ost": "ost",
}


@dataclass(frozen=True)
class Bottleneck:
    """The resource that holds back the slowest ranks: its kind and name, what it carries
    against its capacity (MB/s), and how many ranks it froze."""

    kind: str
    name: str
    load_mb_s: float
    capacity_mb_s: float
    ranks: int

    @property
    def utilisation(self) -> float:
        return self.load_mb_s / self.capacity_mb_s if self.capacity_mb_s else 0.0


@dataclass(frozen=True)
class Prediction:
    """What a workload gets on a plan.  Figures in MB/s; None where no known rate bounds them
    (printed "n/a").

    ``aggregate_mb_s``: IOR's figure, bytes / time of the slowest rank, ranks re-sharing what
    finished ranks free; ``steady_mb_s``: the sum of the ranks' rates while all run (what a
    stonewalled run reports); ``rank_*``: the spread of per-rank rates while all run;
    ``bound_mb_s``: per resource kind, the sum of the capacities the workload can use (a
    bound on the aggregate for the kinds every rank's data crosses whole -- injection, router,
    the ports, oss, ost -- not for the links only part of it crosses: fabric, local, global
    and spine links, leaf uplinks and downlinks); ``unknown``: kinds on the path whose
    rate the site does not give.
    """

    site: str
    strategy: str
    workload: str
    op: str
    ranks: int
    nodes: int
    aggregate_mb_s: float | None
    steady_mb_s: float | None
    rank_min_mb_s: float | None
    rank_median_mb_s: float | None
    rank_max_mb_s: float | None
    slowest_over_fastest: float | None
    bottleneck: Bottleneck | None
    bound_mb_s: dict[str, float]
    unknown: tuple[str, ...]
    torus: str  # "modelled", or why not ("n/a: fat tree", "n/a: no torus link rates")
    arbitration: str = "fair"  # "age": SeaStar's arbitration without packet age
    #: the fabrics whose OpenSM routes the ranks share ("" when none: uplinks pooled)
    opensm: str = ""
    #: other jobs' nodes streaming alongside (``WorkloadSpec.background``)
    background_nodes: int = 0


@dataclass(frozen=True, eq=False)
class _Built:
    problem: Problem
    names: tuple[tuple[str, str], ...]  # per resource: (kind, name)
    unknown: frozenset[str]  # kinds of which a resource crossed has no known rate


def _build(
    site: Site,
    ix: PlanIndex,
    ranks: Ranks,
    fail: Sequence[str],
    fabric_routes: FabricRoutes | None = None,
    storage_routes: FabricRoutes | None = None,
    njob: int | None = None,
) -> _Built:
    """The problem: every resource the subflows cross.  ``njob``: the job's ranks come first,
    the rest are other jobs' (``unknown`` notes only what the job's ranks cross)."""
    rates: Rates = site.rates
    op = ranks.spec.op
    mask = failed_mask(ix, resolve_failures(ix.plan, fail) if fail else ())
    R, S = len(ix.routers), len(ix.servers)
    nnet, ncnet = len(ix.nets), len(ix.client_nets)
    client, server = ix.sides()
    p_rank, p_ost, p_w = ranks.pair_rank, ranks.pair_ost, ranks.pair_w
    if rates.ost is None:  # OSTs limit nothing: one pair per (rank, server) is enough
        key = p_rank * S + ranks.ost_server[p_ost]
        ukey, inv = np.unique(key, return_inverse=True)
        p_w = np.bincount(inv, weights=p_w, minlength=len(ukey)).astype(np.float64)
        p_rank, p_srv, p_ost = ukey // S, ukey % S, np.full(len(ukey), -1, dtype=np.int64)
    else:
        p_srv = ranks.ost_server[p_ost]
    p_node = ranks.node[p_rank]
    # expand the pairs over the routers that carry them
    if op == "write":
        sh = shares(client, evaluate(client.rows, client.nkeys, mask))
        cls = ix.client_class[p_node]
        keys = np.maximum(cls, 0) * nnet + ix.server_net[p_srv]
    else:
        sh = shares(server, evaluate(server.rows, server.nkeys, mask))
        grp = ix.server_group[p_srv]
        kn = ix.client_cnet[p_node]
        keys = np.maximum(grp, 0) * ncnet + np.maximum(kn, 0)
    nsub = int((sh.first[keys + 1] - sh.first[keys]).sum())
    if nsub > MAX_SUBFLOWS:  # counted before they are laid out
        raise ranks.spec.error(
            "ranks",
            f"{nsub:,} (rank, OST, router) subflows under {ix.plan.strategy}: lnetgen models "
            f"at most {MAX_SUBFLOWS:,}",
        )
    owner, row = sh.rows_of(keys)
    keep = cls[owner] >= 0 if op == "write" else (grp[owner] >= 0) & (kn[owner] >= 0)
    owner, row = owner[keep], row[keep]
    sub_router = sh.router[row]
    sub_w = p_w[owner] * sh.share[row]
    sub_rank = p_rank[owner]
    sub_srv = p_srv[owner]

    names: list[tuple[str, str]] = []
    caps: list[float] = []
    rows: list[IntArray] = []
    cols: list[IntArray] = []
    vals: list[FloatArray] = []
    unknown: set[str] = set()

    def add(
        kind: str,
        labels: Sequence[str],
        cap_each: FloatArray,
        ids: IntArray,
        subs: IntArray | None = None,
    ) -> None:
        """Resources ``labels`` of ``kind``; subflow s crosses ``ids[s]`` (-1: none), or
        with ``subs`` subflow ``subs[i]`` crosses ``ids[i]``.  A resource whose rate is unknown
        limits nothing, and its kind is noted."""
        on = ids >= 0
        if not on.any():
            return
        which = subs[on] if subs is not None else np.nonzero(on)[0]
        mine = ids[on][sub_rank[which] < (njob if njob is not None else len(ranks.node))]
        if not np.isfinite(cap_each[np.unique(mine)]).all():
            unknown.add(kind)  # some resource the job crosses has no known rate
        if not np.isfinite(cap_each).any():
            return
        base = len(names)
        names.extend((kind, lab) for lab in labels)
        caps.extend(cap_each.tolist())
        rows.append(ids[on] + base)
        cols.append(sub_rank[which])
        vals.append(sub_w[which])

    def rate(kind: str) -> float:
        r = rates.get(RATE_OF[kind])
        return r.mb_s if r is not None else np.inf

    def uplink_rate(switch: str) -> float:
        r = site.switch_rate("uplink", switch)
        return r.mb_s if r is not None else np.inf

    nodes, node_ix = np.unique(ranks.node, return_inverse=True)
    names_of = ix.site.clients.names
    add(
        "injection",
        [names_of[i] for i in nodes.tolist()],
        np.full(len(nodes), rate("injection")),
        node_ix[sub_rank],
    )
    if fabric_routes is not None and site.torus is None:
        fabric_links(ix, ranks, op, fabric_routes, sub_rank, sub_router, add, rate("fabric link"))
    if site.dragonfly is not None and site.clients.switch is not None:
        dragonfly_links(ix, ranks, op, sub_rank, sub_router, add, rate)
    add("router", list(ix.routers), np.full(R, rate("router")), sub_router)
    add("router port", list(ix.routers), port_caps(site, ix.routers), sub_router)
    leaves = sorted(set(ix.router_leaf) | set(ix.server_leaf))
    leaf_id = {lab: k for k, lab in enumerate(leaves)}
    ucap = uplink_caps(site, leaves)
    has_up = np.asarray([leaf_uplinks(site, lab) > 0 for lab in leaves], dtype=bool)
    r_leaf = np.asarray([leaf_id[lab] for lab in ix.router_leaf], dtype=np.int64)[sub_router]
    s_leaf = np.asarray([leaf_id[lab] for lab in ix.server_leaf], dtype=np.int64)[sub_srv]
    cross = r_leaf != s_leaf
    if storage_routes is not None:
        # crossings OpenSM routes inside one switch take their own spine links instead
        cross &= ~spine_links(ix, op, storage_routes, sub_router, sub_srv, add, uplink_rate)
    up_leaf = r_leaf if op == "write" else s_leaf
    down_leaf = s_leaf if op == "write" else r_leaf
    # a leaf without uplinks (a TOR): the crossing goes through a core lnetgen does not know
    add("leaf uplinks", leaves, ucap, np.where(cross & has_up[up_leaf], up_leaf, -1))
    add("leaf downlinks", leaves, ucap, np.where(cross & has_up[down_leaf], down_leaf, -1))
    add("server port", list(ix.servers), port_caps(site, ix.servers), sub_srv)
    add("oss", list(ix.servers), np.full(S, rate("oss")), sub_srv)
    if rates.ost is not None:
        add("ost", list(ranks.ost_label), np.full(len(ranks.ost_label), rate("ost")), p_ost[owner])
    else:
        unknown.add("ost")

    nres = len(names)
    use = sp.csr_matrix(
        (
            np.concatenate(vals) if vals else np.zeros(0),
            (
                np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64),
                np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64),
            ),
        ),
        shape=(nres, len(ranks.node)),
    )
    use.sum_duplicates()
    torus: Torus | None = None
    t = site.torus
    if t is not None and rates.torus_link is not None and ix.router_coords is not None:
        link_cap = np.empty((*t.dims, 6))
        for k, r in enumerate(rates.torus_link):
            link_cap[..., k] = r.mb_s
        c_chip = site.clients.coords[ranks.node[sub_rank]].astype(np.int64)
        r_chip = ix.router_coords[sub_router].astype(np.int64)
        src, dst = (c_chip, r_chip) if op == "write" else (r_chip, c_chip)
        torus = Torus.build(t.dims, t.routing, sub_rank, src, dst, sub_w, link_cap)
    problem = Problem(len(ranks.node), use, np.asarray(caps, dtype=np.float64), torus)
    return _Built(problem, tuple(names), frozenset(unknown))


def predict(
    site: Site,
    plan: Plan,
    spec: WorkloadSpec,
    *,
    fail: Sequence[str] = (),
    index: PlanIndex | None = None,
    arbitration: str = "fair",
    fabric_routes: FabricRoutes | None = None,
    storage_routes: FabricRoutes | None = None,
) -> Prediction:
    """Predict ``spec`` on ``plan`` (see the module docstring); ``InputError`` when the
    workload cannot run on the site.  ``arbitration="age"``: SeaStar's arbitration without
    packet age -- a rank ``H`` torus hops from its router gets ``2^-H`` of a near rank's share
    wherever they meet (``lnetgen.throughput.share``); "fair" otherwise, and on a site without
    a modelled torus.  ``fabric_routes``: on a fat-tree client side, the compute fabric's
    routes (``lnetgen.throughput.fabric``) whose links the ranks then share;
    ``storage_routes``: the storage fabric's router <-> server routes, whose spine links then
    replace the pooled leaf uplinks inside each switch."""
    ix = index or index_plan(site, plan)
    ranks, njob = with_background(site, spec, build_ranks(site, plan, ix, spec))
    job = np.arange(len(ranks.node)) < njob  # the rest: other jobs' endless streams
    nodes = len(np.unique(ranks.node[:njob]))
    built = _build(site, ix, ranks, fail, fabric_routes, storage_routes, njob)
    p = built.problem
    weight = None
    if arbitration == "age" and p.torus is not None:
        weight = np.exp2(-p.torus.rank_hops(p.nranks))
    sh = max_min(p, weight=weight)
    bounded = np.isfinite(sh.rate) & (sh.frozen_by != -1)
    served = p.served & job
    torus_note = _torus_note(site)
    unknown = tuple(k for k in KINDS if k in built.unknown)
    if site.torus is not None and site.rates.torus_link is None:
        unknown = ("torus link", *unknown)
    bounds = _bounds(p, built, njob)
    routed = _routes_note(fabric_routes, storage_routes)
    if not served.any() or not bounded[served].all():
        return Prediction(
            site.name, plan.strategy, spec.label(), spec.op, njob, nodes,
            None, None, None, None, None, None, None, bounds, unknown, torus_note,
            arbitration="age" if weight is not None else "fair",
            opensm=routed, background_nodes=p.nranks - njob,
        )  # fmt: skip
    rate = sh.rate[served]
    done = completion(p, weight=weight, start=sh, endless=~job)[served]
    aggregate = float(rate.size / done.max())
    slow = int(np.argmin(sh.rate + np.where(served, 0, np.inf)))
    neck = _bottleneck(p, built, sh, njob, slow, weight is None)
    return Prediction(
        site=site.name,
        strategy=plan.strategy,
        workload=spec.label(),
        op=spec.op,
        ranks=njob,
        nodes=nodes,
        aggregate_mb_s=rounded(aggregate),
        steady_mb_s=rounded(rate.sum()),
        rank_min_mb_s=rounded(rate.min()),
        rank_median_mb_s=rounded(np.median(rate)),
        rank_max_mb_s=rounded(rate.max()),
        slowest_over_fastest=rounded(done.max() / done.min()) if done.min() > 0 else None,
        bottleneck=neck,
        bound_mb_s=bounds,
        unknown=unknown,
        torus=torus_note,
        arbitration="age" if weight is not None else "fair",
        opensm=routed,
        background_nodes=p.nranks - njob,
    )


def paths_per_link(
    site: Site, plan: Plan, spec: WorkloadSpec, *, index: PlanIndex | None = None
) -> FloatArray | None:
    """Per directed torus link (X, Y, Z, 6), how many (rank, router) paths of ``spec`` cross
    it, whatever share of the rank each carries: under projection, where a rank reaches its
    OST's server through one router, seed 000's "client-OST pairs" sharing a link.  None
    without a modelled torus."""
    ix = index or index_plan(site, plan)
    t = _build(site, ix, build_ranks(site, plan, ix, spec), ()).problem.torus
    return None if t is None else t.path_counts()


def _routes_note(*routes: FabricRoutes | None) -> str:
    """ "wolf-ib, storage-ib (recorded settings)": the fabrics routed by OpenSM's tables."""
    given = [r for r in routes if r is not None]
    if not given:
        return ""
    return f"{', '.join(r.fabric for r in given)} ({given[0].settings} settings)"


def _torus_note(site: Site) -> str:
    if site.torus is None:
        return "n/a: not a torus"
    if site.rates.torus_link is None:
        return "n/a: no torus link rates"
    return "modelled"


def _bounds(p: Problem, built: _Built, njob: int) -> dict[str, float]:
    """Per kind: the sum of the capacities of the resources the job's ranks (the first
    ``njob``; not other jobs' streams) cross."""
    out: dict[str, float] = {}
    touched = np.nonzero(np.asarray(p.use[:, :njob].getnnz(axis=1) > 0).reshape(-1))[0]
    for kind in KINDS:
        ids = [int(r) for r in touched.tolist() if built.names[r][0] == kind]
        caps = p.cap[ids] if ids else np.zeros(0)
        if len(caps) and np.isfinite(caps).all():
            out[kind] = rounded(caps.sum())
    return out


def _bottleneck(
    p: Problem, built: _Built, sh: Shares, njob: int, slow: int, fair: bool
) -> Bottleneck:
    """The resource that froze the slowest rank, with how many of the job's ranks (the first
    ``njob``) that same resource froze.

    A torus link: in a fair filling every rank still grows when the slowest one stops, so the
    links that stopped it are those of its paths full at every rank's rate capped at its own
    (``fair``; the first in (x, y, z, direction) order, so that float noise in the sums cannot
    change the name), and the ranks it holds are the torus-frozen ranks crossing it at that
    rate.  A full link the faster ranks fill later is not it.  With age weights (not one
    filling) it is the fullest link of its paths at the final rates, holding the torus-frozen
    ranks that cross it (another full link of theirs may hold some of them as well)."""
    frozen_by = sh.frozen_by[:njob]
    by = int(frozen_by[slow])
    if by == -2 and sh.link_load is not None and p.torus is not None:
        from lnetgen.topology import DIRECTIONS

        t = p.torus
        own = t.loads((np.arange(p.nranks) == slow).astype(np.float64))
        mine = own > 1e-12 * float(own.max())  # no residue of the summing on an idle link
        rate = sh.rate
        at = t.loads(np.minimum(rate, rate[slow])) if fair else sh.link_load
        util = np.where(mine, at / t.cap, -np.inf)
        top = float(util.max())
        first = int(np.argmax(util >= top * (1 - FULL)))
        where = np.unravel_index(first, util.shape)
        name = f"({where[0]},{where[1]},{where[2]}){DIRECTIONS[int(where[3])]}"
        one = np.zeros(util.shape)
        one[where] = 1.0
        held = t.ranks_on(one, p.nranks)[:njob] & (frozen_by == -2)
        if fair:
            held &= rate[:njob] <= rate[slow] * (1 + 1e-9)
        return Bottleneck(
            "torus link",
            name,
            rounded(sh.link_load[where]),
            rounded(t.cap[where]),
            int(held.sum()),
        )
    kind, name = built.names[by]
    held_by = int((frozen_by == by).sum())
    return Bottleneck(kind, name, rounded(sh.load[by]), rounded(p.cap[by]), held_by)
