"""Predicted bandwidth of a workload on a plan: every rank's path, the fair share it gets, and
the aggregate as IOR reports it.

A write subflow goes client -> (torus links, dimension-order) -> router -> router's storage
port -> [leaf uplinks -> leaf downlinks, when the router and the server sit on different leaf
modules of a director or on different TORs: a TOR's ``uplinks`` are its leaf's] -> server port
-> OSS -> OST; a read goes the other way, through the
router the *server's* route table picks.  The router is each of the client's (server's)
gateways at the best live priority, the rank's data shared equally among them (LNet
round-robin).  Every component whose rate ``Site.rates`` gives is a resource of that capacity;
the others do not limit anything and are listed as ``n/a`` -- a prediction with an unknown
rate on the path is an upper bound on what that rate would allow, and says so
(``Prediction.bound``).  Every rate it used is named with its inventory entry and source
(``Prediction.sources``, ``Bottleneck.source``; ``lnetgen.throughput.sources``).

A router or server with Multi-Rail ports (``rails``) has one port resource of ``1 + rails``
links: LNet spreads a peer's traffic over all its NIs, so the links are pooled like a leaf's
uplinks.

On a dragonfly client side a subflow also crosses the local links between its client's and its
router's switches (one group) or the global links between their groups (``_dragonfly_links``).

With OpenSM's simulated routes (``lnetgen.throughput.fabric``) a fat-tree compute fabric's
links are resources too (``fabric_routes``), and a crossing of the storage fabric takes the
spine links its route names (``storage_routes``) instead of the modules' pooled uplinks.
Without them, on a fat-tree client side each IO node's own compute port is still a ``fabric
link`` (every byte through the IO node crosses it, whatever OpenSM routes), and the rest of
the compute fabric is named in ``Prediction.unmodelled``: the figure is an upper bound.  So
is a crossing out of a TOR or leaf the inventory gives no uplinks (no capacity is invented).

A rank needs a route to its file system's MDS (both ways) as well as to its OSTs: without
one it cannot open its file and hangs (``Prediction.unrouted``).  A rank whose path crosses
no resource of known rate is counted as done at once (``Prediction.unbounded``): the others'
figures stand, as an upper bound, instead of none.

Not modelled (the reproduction table in docs/throughput.md says where it matters): without
those routes, the compute fabric of a fat-tree client side beyond the IO nodes' ports and the
storage fabric's spine choice (a leaf's uplinks are pooled); MDS traffic (only the route to
the MDS), Lustre client and server software limits, head-of-line blocking inside a switch,
read-ahead and write-back caches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.throughput.classes import merged, rank_classes
from lnetgen.throughput.fabric import FabricRoutes
from lnetgen.throughput.fill import FULL
from lnetgen.throughput.problem import KINDS, _Built, check_size
from lnetgen.throughput.problem import build as _build
from lnetgen.throughput.share import Problem, Shares, completion, max_min
from lnetgen.throughput.sources import kind_entries, resource_entry
from lnetgen.throughput.workload import OPS, Ranks, WorkloadSpec, build_ranks, with_background
from lnetgen.traffic import IntArray, PlanIndex, index_plan
from lnetgen.traffic.settings import FloatArray, rounded


@dataclass(frozen=True)
class Bottleneck:
    """The resource that holds back the slowest ranks: its kind and name, what it carries
    against its capacity (MB/s), how many ranks it froze, and the inventory entry its
    capacity comes from (``"oss 1250 MB/s: seed 000 s3: ..."``; a port's or leaf's capacity is
    that rate times its ports or uplinks)."""

    kind: str
    name: str
    load_mb_s: float
    capacity_mb_s: float
    ranks: int
    source: str = ""

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
    ``unrouted``: the job's ranks with no live route to some OST of their file, or to an MDS
    of their file system either way (a failure took their gateways, or the servers of their
    OSTs, or the MDS's net: the rank cannot open its file).  Such a rank hangs, so the run never
    completes: IOR reports nothing, and ``aggregate_mb_s`` is 0, never the figure of the
    ranks that do run.  ``steady_mb_s`` and ``rank_*`` are then those of the ranks with a
    route (``ranks - unrouted``) running without the hung ones (None when none has one);
    ``bound_mb_s``: per resource kind, the sum of the capacities the workload can use (a
    bound on the aggregate for the kinds every rank's data crosses whole -- injection, router,
    the ports, oss, ost -- not for the links only part of it crosses: fabric, local, global
    and spine links, leaf uplinks and downlinks); ``unknown``: kinds on the path whose
    rate the site does not give; ``unmodelled``: what the job's paths cross that the model
    has no resource for, one phrase each (a TOR or leaf without uplinks that traffic leaves
    by, the compute fabric of a fat tree whose OpenSM routes were not simulated).  Either
    makes the figures upper bounds (``bound``).

    ``unbounded``: the job's ranks whose path crosses no resource of known rate (on the
    router's own chip with only ``torus_link`` given, say): nothing bounds them, so they
    are counted as done at once.  The figures are then those the other ranks allow, an upper
    bound: ``aggregate_mb_s`` is every rank's bytes over the slowest bounded rank's time
    (what IOR would report were the unbounded ranks infinitely fast), ``steady_mb_s`` and
    ``rank_*`` those of the bounded ranks; ``unbounded_nodes`` names the first few of their
    nodes (at most :data:`UNBOUNDED_NAMES`).  With no bounded rank the figures are None
    (n/a).
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
    bound: bool = False
    sources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unrouted: int = 0
    unmodelled: tuple[str, ...] = ()
    unbounded: int = 0
    unbounded_nodes: tuple[str, ...] = ()

    @property
    def why_bound(self) -> str:
        """Why the figures are upper bounds, one phrase ("" when they are not): "no injection
        rate; not modelled: ...; 1 of 3 ranks unbounded"."""
        parts = [f"no {', '.join(self.unknown)} rate"] if self.unknown else []
        if self.unmodelled:
            parts.append(f"not modelled: {'; '.join(self.unmodelled)}")
        if self.unbounded:
            more = ", ..." if self.unbounded > len(self.unbounded_nodes) else ""
            parts.append(
                f"{self.unbounded} of {self.ranks} ranks cross no resource of known rate "
                f"({', '.join(self.unbounded_nodes)}{more})"
            )
        return "; ".join(parts)


#: Nodes of unbounded ranks a prediction names (``Prediction.unbounded_nodes``).
UNBOUNDED_NAMES = 5


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
    ranks: Ranks | None = None,
) -> Prediction:
    """Predict ``spec`` on ``plan`` (see the module docstring); ``InputError`` when the
    workload cannot run on the site.  ``arbitration="age"``: SeaStar's arbitration without
    packet age -- a rank ``H`` torus hops from its router gets ``2^-H`` of a near rank's share
    wherever they meet (``lnetgen.throughput.share``); "fair" otherwise, and on a site without
    a modelled torus.  ``fabric_routes``: on a fat-tree client side, the compute fabric's
    routes (``lnetgen.throughput.fabric``) whose links the ranks then share;
    ``storage_routes``: the storage fabric's router <-> server routes, whose spine links then
    replace the pooled leaf uplinks inside each switch.  ``ranks``: ``spec``'s ranks when the
    caller has drawn them (:func:`predict_ops`)."""
    ix = index or index_plan(site, plan)
    built, njob, nodes = prepare(
        site, plan, ix, spec, fail, fabric_routes, storage_routes, ranks=ranks
    )
    routed = _routes_note(fabric_routes, storage_routes)
    return solved(site, plan, spec, built, njob, nodes, arbitration, routed)


def predict_ops(
    site: Site,
    plan: Plan,
    spec: WorkloadSpec,
    ops: Sequence[str] = OPS,
    *,
    fail: Sequence[str] = (),
    index: PlanIndex | None = None,
    arbitration: str = "fair",
    fabric_routes: FabricRoutes | None = None,
    storage_routes: FabricRoutes | None = None,
) -> tuple[Prediction, ...]:
    """:func:`predict` of ``spec`` as each of ``ops`` (writes and reads), its ranks drawn
    once.  Every op's size is checked before any is solved, so a workload too large for one
    direction is refused at once, not after the other is solved (Blue Waters, 4 million
    ranks under nearest-neighbor: the reads' refusal came after 40 s of solving writes)."""
    ix = index or index_plan(site, plan)
    ranks = build_ranks(site, plan, ix, spec)
    check_size(ix, with_background(site, spec, ranks)[0], ops, fail)
    go = partial(
        predict, site, plan, fail=fail, index=ix, arbitration=arbitration,
        fabric_routes=fabric_routes, storage_routes=storage_routes,
    )  # fmt: skip
    each = [replace(spec, op=op) for op in ops]
    return tuple(go(e, ranks=replace(ranks, spec=e)) for e in each)


def prepare(
    site: Site,
    plan: Plan,
    ix: PlanIndex,
    spec: WorkloadSpec,
    fail: Sequence[str] = (),
    fabric_routes: FabricRoutes | None = None,
    storage_routes: FabricRoutes | None = None,
    keep_subflows: bool = False,
    ranks: Ranks | None = None,
) -> tuple[_Built, int, int]:
    """The problem of ``spec`` (its columns the classes of ranks with the same path, when two
    ranks have one), how many of its columns are the job's, and the job's nodes; ``ranks``:
    the job's ranks, when the caller has drawn them."""
    job = build_ranks(site, plan, ix, spec) if ranks is None else ranks
    ranks, njob = with_background(site, spec, job)
    nodes = len(np.unique(ranks.node[:njob]))
    cl = rank_classes(ranks, njob)
    if cl is not None:
        ranks, njob = merged(ranks, cl), int(np.searchsorted(cl.first, njob))
    built = _build(site, ix, ranks, fail, fabric_routes, storage_routes, njob, keep_subflows, cl)
    return built, njob, nodes


def solved(
    site: Site,
    plan: Plan,
    spec: WorkloadSpec,
    built: _Built,
    njob: int,
    nodes: int,
    arbitration: str = "fair",
    routed: str = "",
    bounds: dict[str, float] | None = None,
    sources: dict[str, tuple[str, ...]] | None = None,
) -> Prediction:
    """The prediction of a built problem whose first ``njob`` ranks (classes) are the job's,
    on ``nodes`` nodes (:func:`predict`); ``bounds`` and ``sources``: :func:`_bounds` and
    :func:`_sources` when the caller has them (they do not depend on the torus paths)."""
    p = built.problem
    job = np.arange(p.nranks) < njob  # the rest: other jobs' endless streams
    cl = built.classes
    count = np.ones(p.nranks, dtype=np.int64) if cl is None else cl.count
    ranks, others = int(count[:njob].sum()), int(count[njob:].sum())
    weight = None
    if arbitration == "age" and p.torus is not None:
        weight = np.exp2(-p.torus.rank_hops(p.nranks))
    sh = max_min(p, weight=weight)
    bounded = np.isfinite(sh.rate) & (sh.frozen_by != -1)
    stranded = np.zeros(p.nranks, dtype=bool) if built.stranded is None else built.stranded
    unrouted = int(count[:njob][stranded[:njob]].sum())
    served = p.served & job & ~stranded
    free = served & ~bounded  # nothing known bounds them: done at once
    unbounded = int(count[free].sum())
    free_nodes = tuple(
        site.clients.names[i] for i in np.unique(built.node[free])[:UNBOUNDED_NAMES].tolist()
    ) if built.node is not None else ()  # fmt: skip
    torus_note = _torus_note(site)
    unknown = tuple(k for k in KINDS if k in built.unknown)
    if site.torus is not None and site.rates.torus_link is None:
        unknown = ("torus link", *unknown)
    bounds = _bounds(p, built, njob) if bounds is None else bounds
    sources = _sources(site, p, built, njob) if sources is None else sources
    limited = served & bounded
    if not limited.any():
        return Prediction(
            site.name, plan.strategy, spec.label(), spec.op, ranks, nodes,
            0.0 if unrouted else None, None, None, None, None, None, None, bounds, unknown,
            torus_note, arbitration="age" if weight is not None else "fair",
            opensm=routed, background_nodes=others,
            sources=sources, unrouted=unrouted, unmodelled=built.unmodelled,
            unbounded=unbounded, unbounded_nodes=free_nodes,
        )  # fmt: skip
    done = completion(p, weight=weight, start=sh, endless=~job)
    rate = sh.rate
    if cl is not None:  # per rank, as each rank of a class gets it
        rate, done, served, limited = rate[cl.of], done[cl.of], served[cl.of], limited[cl.of]
    moved = int(served.sum())  # every rank's bytes, the unbounded ones' moved at once
    rate, done = rate[limited], done[limited]
    # a rank without a route hangs: the run never ends, and IOR reports nothing
    aggregate = 0.0 if unrouted else float(moved / done.max())
    slow = int(np.argmin(sh.rate + np.where(p.served & job & ~stranded, 0, np.inf)))
    neck = _bottleneck(p, built, sh, njob, slow, weight is None, count)
    neck = replace(neck, source=resource_entry(site, neck.kind, neck.name))
    return Prediction(
        site=site.name,
        strategy=plan.strategy,
        workload=spec.label(),
        op=spec.op,
        ranks=ranks,
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
        background_nodes=others,
        bound=bool(unknown or built.unmodelled or unbounded),
        sources=sources,
        unrouted=unrouted,
        unmodelled=built.unmodelled,
        unbounded=unbounded,
        unbounded_nodes=free_nodes,
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


def _sources(site: Site, p: Problem, built: _Built, njob: int) -> dict[str, tuple[str, ...]]:
    """Per kind the job's ranks (the first ``njob``) cross, the entries of its rates (a
    kind whose resources all lack one is left out); the crossed names are looked up only on
    a site whose switches give their own rates (``kind_entries``)."""
    kinds = dict.fromkeys(k for k, _ in built.names)
    if p.torus is not None:
        kinds = {"torus link": None, **kinds}
    touched: list[int] | None = None

    def names_of(kind: str) -> list[str]:
        nonlocal touched
        if touched is None:
            nnz = np.asarray(p.use[:, :njob].getnnz(axis=1) > 0).reshape(-1)
            touched = np.nonzero(nnz)[0].tolist()
        return [built.names[r][1] for r in touched if built.names[r][0] == kind]

    out = {}
    for kind in kinds:
        got = kind_entries(site, kind, partial(names_of, kind))
        if got:
            out[kind] = got
    return out


def _bottleneck(
    p: Problem,
    built: _Built,
    sh: Shares,
    njob: int,
    slow: int,
    fair: bool,
    count: IntArray | None = None,
) -> Bottleneck:
    """The resource that froze the slowest rank, with how many of the job's ranks (the first
    ``njob``, each ``count`` ranks) that same resource froze.

    A torus link: in a fair filling every rank still grows when the slowest one stops, so the
    links that stopped it are those of its paths full at every rank's rate capped at its own
    (``fair``; the first in (x, y, z, direction) order, so that float noise in the sums cannot
    change the name), and the ranks it holds are the torus-frozen ranks crossing it at that
    rate.  A full link the faster ranks fill later is not it.  With age weights (not one
    filling) it is the fullest link of its paths at the final rates, holding the torus-frozen
    ranks that cross it (another full link of theirs may hold some of them as well)."""
    frozen_by = sh.frozen_by[:njob]
    by = int(frozen_by[slow])
    count = np.ones(p.nranks, dtype=np.int64) if count is None else count
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
            int(count[:njob][held].sum()),
        )
    kind, name = built.names[by]
    held_by = int(count[:njob][frozen_by == by].sum())
    return Bottleneck(kind, name, rounded(sh.load[by]), rounded(p.cap[by]), held_by)
