"""One plan analyzed: storage-fabric crossings, torus link loads (dragonfly global links), and
failures (the pairs a
given failure hurts, or the N-1 summary), gathered in an ``Analysis``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lnetgen.analyze.fabric import FabricReport, fabric_report
from lnetgen.analyze.failures import (
    FailureReport,
    NMinus1,
    WorstFailure,
    failure_report,
    n_minus_1,
    named_failure,
    worst_failures,
)
from lnetgen.analyze.plain import plain
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.progress import NO_PROGRESS, Progress
from lnetgen.throughput import DEFAULT, Prediction, WorkloadSpec, predict_ops
from lnetgen.throughput.fabric import FabricRoutes
from lnetgen.traffic.dragonfly import DragonflyReport, dragonfly_report
from lnetgen.traffic.findings import Finding
from lnetgen.traffic.flows import traffic
from lnetgen.traffic.index import PlanIndex, index_plan
from lnetgen.traffic.routes import Down, carriers, failed_mask, resolve_down
from lnetgen.traffic.settings import Settings, Workload, rounded, settings_for
from lnetgen.traffic.torus import TorusReport, torus_report


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
    # the busiest surviving router: under --fail, or the worst single router / leaf / switch
    failure_loads: tuple[WorstFailure, ...]
    findings: tuple[Finding, ...]
    #: predicted bandwidth of the IOR workload, writes then reads (lnetgen.throughput)
    throughput: tuple[Prediction, ...] = ()
    #: on a dragonfly client side: flows on a switch, in a group, across global links
    dragonfly: DragonflyReport | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(plain(self))


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
    throughput: WorkloadSpec | None = DEFAULT,
    arbitration: str = "fair",
    fabric_routes: FabricRoutes | None = None,
    storage_routes: FabricRoutes | None = None,
    progress: Progress = NO_PROGRESS,
) -> Analysis:
    """Analyze ``plan`` on ``site``: storage-fabric crossings, torus loads, failures.

    ``fail`` names routers, leaves, switches, servers, nets or groups (see
    :func:`resolve_down`: a leaf or switch takes the servers cabled to it down with its
    routers, a server goes down alone and its failover partner carries its targets); traffic
    then uses the best live priority.  Without ``fail`` the N-1 summary is computed
    (unless ``with_n_minus_1`` is False).  ``workload`` None is the uniform workload.
    ``ports`` False skips the per-router link figures (one ``link_loads`` call per router and
    phase) for batched calls: same link loads, faster; ``torus`` False skips the torus.
    ``throughput`` is the IOR workload whose bandwidth is predicted, as a write and as a read
    (None: no prediction; the default, on a site whose servers list no OSTs, neither);
    ``arbitration`` "age" models SeaStar's arbitration without packet age
    (``lnetgen.throughput.predict``); ``fabric_routes`` the compute fabric's OpenSM routes on
    a fat-tree client side, ``storage_routes`` the storage fabric's router <-> server routes
    (``lnetgen.throughput.fabric``).
    Raises ``InputError`` when the plan does not match the site or a name is unknown.
    """
    settings = settings or settings_for(site)
    if throughput is DEFAULT and not any(s.osts for s in site.servers if s.role == "oss"):
        throughput = None  # nothing to predict by default; an explicit workload still errs
    tick = progress("analyzing", 6)  # index, traffic, fabric + torus, N-1, failure, GB/s
    ix = index or index_plan(site, plan, settings)
    tick()
    down = resolve_down(plan, fail) if fail else Down()
    failed = down.routers
    mask = failed_mask(ix, failed)
    tr = traffic(ix, mask, workload, carriers(ix, down.servers))
    tick()
    fabric = fabric_report(ix, tr)
    torus_part = torus_report(ix, tr, settings, mask, ports) if torus else None
    tick()
    n1 = n_minus_1(ix) if (not fail and with_n_minus_1) else None
    tick()
    loads = _failure_loads(ix, down, bool(fail) or with_n_minus_1)
    tick()
    predicted: tuple[Prediction, ...] = ()
    if throughput is not None:
        predicted = predict_ops(
            site,
            plan,
            throughput,
            fail=fail,
            index=ix,
            arbitration=arbitration,
            fabric_routes=fabric_routes,
            storage_routes=storage_routes,
        )
    tick()
    return Analysis(
        site=plan.site,
        strategy=plan.strategy,
        workload=workload.name if workload is not None else "uniform",
        settings=settings,
        flows=rounded(tr.served_w + tr.lost_w),
        lost_writes=rounded(tr.lost_w),
        lost_reads=rounded(tr.lost_r),
        fabric=fabric,
        torus=torus_part,
        failure=(failure_report(ix, failed, down.servers, down.named_servers) if fail else None),
        n_minus_1=n1,
        failure_loads=loads,
        findings=ix.findings,
        throughput=predicted,
        dragonfly=dragonfly_report(ix, tr),
    )


def _failure_loads(ix: PlanIndex, down: Down, wanted: bool) -> tuple[WorstFailure, ...]:
    """Write flows on the busiest surviving router (uniform workload): with ``down`` down, or
    for the worst single router, leaf and switch failure when nothing is failed."""
    if not wanted:
        return ()
    if down.routers or down.servers:
        one = named_failure(ix, down.routers, down.servers)
        return (one,) if one is not None else ()
    return worst_failures(ix)
