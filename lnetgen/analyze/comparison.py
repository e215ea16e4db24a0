"""The strategies side by side: solve a site with each, analyze every plan the same way, and
add the torus loads of placed, node-order and random clients (``lnetgen.place``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lnetgen import place
from lnetgen.analyze.analysis import analyze
from lnetgen.analyze.churn import Churn, churn
from lnetgen.analyze.plain import plain
from lnetgen.diagnostics import InputError
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.progress import NO_PROGRESS, Progress, counted
from lnetgen.solve import kept_nets, solve, strategy_names
from lnetgen.strategies import SolveError
from lnetgen.throughput import DEFAULT, WorkloadSpec
from lnetgen.throughput.fabric import FabricRoutes
from lnetgen.traffic.dragonfly import GroupFlows
from lnetgen.traffic.index import PlanIndex, index_plan
from lnetgen.traffic.settings import Settings, rounded, settings_for


@dataclass(frozen=True)
class CompareRow:
    """One strategy, side by side with the others.  Torus figures are the maximum flows on a
    directed link (writes / reads); ``placed_*`` use one client per OST placed by
    ``lnetgen.place`` (nearest free clients), ``default_*`` contiguous clients in node order,
    ``random_*`` random clients, for the same OSTs.  On a site whose clients are not on a
    torus (a fat tree) the torus figures are None: not applicable, not zero."""

    strategy: str
    error: str = ""
    nets: int = 0
    classes: int = 0
    spine_fraction: float = 0.0
    uplink_max: float = 0.0
    uplink_imbalance: float = 0.0
    uniform_write_max: float | None = 0.0
    uniform_read_max: float | None = 0.0
    uniform_write_volume: float | None = 0.0
    uniform_saturated: int | None = 0
    placed_write_max: float | None = 0.0
    placed_read_max: float | None = 0.0
    placed_write_volume: float | None = 0.0
    placed_read_volume: float | None = 0.0
    placed_saturated: int | None = 0
    default_write_max: float | None = 0.0
    default_read_max: float | None = 0.0
    random_write_max: float | None = 0.0
    random_read_max: float | None = 0.0
    worst_router: str = ""
    worst_lost: int = 0
    worst_fallback: int = 0
    routers_losing_a_net: int = 0
    # the worst single router / leaf / switch failure: the busiest surviving router's write
    # flows over the busiest with all routers up, and what failed
    failure_load_ratio: float = 0.0
    failure_load_failed: str = ""
    # most write flows left without a route by one such failure (a leaf or switch failure
    # takes the servers cabled to it: lnetgen.traffic.routes.Down)
    failure_lost: float = 0.0
    findings: int = 0
    # predicted bandwidth of the workload (lnetgen.throughput), MB/s; None: n/a; 0 with ranks
    # that have no route to their OSTs (``*_unrouted``: how many; the run never completes)
    write_mb_s: float | None = None
    read_mb_s: float | None = None
    write_unrouted: int = 0
    read_unrouted: int = 0
    # the kinds of resource the prediction crossed without a rate: its figure is an upper bound
    write_unknown: tuple[str, ...] = ()
    read_unknown: tuple[str, ...] = ()
    # the figure is an upper bound (``Prediction.bound``): a rate missing (``*_unknown``), a
    # part not modelled (``*_unmodelled``), ranks nothing known bounds (``*_unbounded``)
    write_bound: bool = False
    read_bound: bool = False
    write_unmodelled: tuple[str, ...] = ()
    read_unmodelled: tuple[str, ...] = ()
    write_unbounded: int = 0
    read_unbounded: int = 0
    bottleneck: str = ""  # of the writes: "kind name (utilisation)"
    opensm: str = ""  # the fabrics whose OpenSM routes the predictions follow
    # with ``since``: the churn from the older inventory's plan (lnetgen.analyze.churn)
    churn: Churn | None = None
    # on a dragonfly client side: where the write flows go (lnetgen.traffic.dragonfly), and
    # the read flows (from the routers the servers' route tables pick: they may differ)
    dragonfly: GroupFlows | None = None
    dragonfly_reads: GroupFlows | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(plain(self))

    def is_bound(self, op: str) -> bool:
        """The ``op`` figure is an upper bound: its prediction said so, or a rate it crossed
        is missing (a row built from ``unknown`` alone)."""
        if op == "write":
            return self.write_bound or bool(self.write_unknown)
        return self.read_bound or bool(self.read_unknown)


#: The torus figures of a row: None (n/a) on a site without a torus.
_TORUS_FIELDS = (
    "uniform_write_max",
    "uniform_read_max",
    "uniform_write_volume",
    "uniform_saturated",
    "placed_write_max",
    "placed_read_max",
    "placed_write_volume",
    "placed_read_volume",
    "placed_saturated",
    "default_write_max",
    "default_read_max",
    "random_write_max",
    "random_read_max",
)


def _placements(
    site: Site, plan: Plan, oss: list[str], settings: Settings, seed: int, ix: PlanIndex
) -> place.PlacementComparison | None:
    """One client per OST placed, by default and at random; None when the site has fewer
    free clients than OSTs (a valid inventory: its columns are n/a, not an error)."""
    try:
        return place.compare_placements(
            site, plan, oss, None, settings=settings, seed=seed, index=ix
        )
    except InputError as exc:
        if all(d.code == "E-PLACE-FULL" for d in exc.diagnostics):
            return None
        raise


def compare(
    site: Site,
    strategies: Sequence[str] | None = None,
    settings: Settings | None = None,
    seed: int = 0,
    uniform_torus: bool = True,
    since: Site | None = None,
    progress: Progress = NO_PROGRESS,
    workload: WorkloadSpec | None = DEFAULT,
    fabric_routes: FabricRoutes | None = None,
    storage_routes: FabricRoutes | None = None,
) -> list[CompareRow]:
    """Solve ``site`` with every strategy (or ``strategies``) and analyze each the same way.

    ``uniform_torus`` False leaves out the torus loads of the uniform workload (the costly
    part: every client to every router); the placed/default/random loads are always computed
    on a torus site.  ``since`` (an older inventory of the site) adds each strategy's churn:
    how many of the clients both hold change routes, and how many routes.  ``fabric_routes``
    and ``storage_routes``: OpenSM's routes for the predictions (``lnetgen.throughput.fabric``),
    the same for every layout."""
    settings = settings or settings_for(site)
    rows: list[CompareRow] = []
    names = list(strategies or strategy_names())
    for name in counted(names, progress("strategies", len(names))):
        old = None
        if since is not None:
            with contextlib.suppress(SolveError):  # no such layout before: no churn
                old = solve(since, name)
        try:
            # grown from ``since``: keep the net numbers its plan deployed (--keep-nets)
            plan = solve(site, name, kept_nets(old) if old is not None else None)
        except SolveError as exc:
            rows.append(CompareRow(name, error="; ".join(d.message for d in exc.diagnostics)[:300]))
            continue
        ix = index_plan(site, plan, settings)
        a = analyze(
            site,
            plan,
            settings=settings,
            index=ix,
            torus=uniform_torus,
            throughput=workload,
            fabric_routes=fabric_routes,
            storage_routes=storage_routes,
        )
        kw: dict[str, Any] = {}
        if site.torus is None:
            kw.update(dict.fromkeys(_TORUS_FIELDS))  # not applicable: no torus
        if a.torus is not None:
            kw.update(
                uniform_write_max=a.torus.writes.max,
                uniform_read_max=a.torus.reads.max,
                uniform_write_volume=a.torus.writes.volume,
                uniform_saturated=a.torus.writes.saturated + a.torus.reads.saturated,
            )
        if site.torus is not None and ix.router_coords is not None:
            oss = place.oss_with_osts(site, plan)
            cmp = _placements(site, plan, oss, settings, seed, ix) if oss else None
            if cmp is None:
                kw.update(dict.fromkeys(_TORUS_FIELDS[4:]))  # placed, default, random: n/a
            else:
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
        if a.failure_loads:
            top = max(a.failure_loads, key=lambda w: w.ratio)
            kw.update(
                failure_load_ratio=rounded(top.ratio),
                failure_load_failed=f"{top.scope} {top.failed}",
                failure_lost=rounded(max(max(w.lost, w.most_lost) for w in a.failure_loads)),
            )
        for pred in a.throughput:
            kw[f"{pred.op}_mb_s"] = pred.aggregate_mb_s
            kw[f"{pred.op}_unrouted"] = pred.unrouted
            kw[f"{pred.op}_unknown"] = tuple(pred.unknown)
            kw[f"{pred.op}_bound"] = pred.bound
            kw[f"{pred.op}_unmodelled"] = tuple(pred.unmodelled)
            kw[f"{pred.op}_unbounded"] = pred.unbounded
            kw["opensm"] = pred.opensm
            b = pred.bottleneck
            if pred.op == "write" and b is not None:
                kw["bottleneck"] = f"{b.kind} {b.name} ({100 * b.utilisation:.0f} %)"
        if old is not None:
            kw["churn"] = churn(old, plan)
        if a.dragonfly is not None:
            kw["dragonfly"] = a.dragonfly.writes
            kw["dragonfly_reads"] = a.dragonfly.reads
        rows.append(
            CompareRow(
                name,
                nets=len(ix.nets),
                classes=len(ix.classes),
                spine_fraction=rounded(a.fabric.writes.fraction),
                uplink_max=rounded(a.fabric.writes.max_uplink),
                uplink_imbalance=rounded(a.fabric.writes.imbalance),
                routers_losing_a_net=nm.routers_losing_a_net if nm is not None else 0,
                findings=len(a.findings),
                **kw,
            )
        )
    return rows
