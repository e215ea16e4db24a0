"""Each strategy solved and analyzed once: the plan, its route index, the analysis, the torus
link loads and the clients per router, which every picture of that strategy reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# the module, not its function: ``solve.solve`` is looked up at call time, so a test can stand
# in for it
from lnetgen import solve
from lnetgen.analyze import (
    Analysis,
    PlanIndex,
    Settings,
    analyze,
    client_shares,
    index_plan,
    link_load_arrays,
)
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.progress import NO_PROGRESS, Progress
from lnetgen.strategies import SolveError
from lnetgen.throughput import DEFAULT, WorkloadSpec
from lnetgen.throughput.fabric import FabricRoutes

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def clients_per_router(ix: PlanIndex) -> IntArray:
    """Clients each router serves (members of a class with a priority-0 route through it,
    counted once however many nets it carries for them), in plan router order."""
    R = len(ix.routers)
    sh = client_shares(ix)
    ok = sh.router >= 0
    cls = sh.key[ok] // max(len(ix.nets), 1)
    pairs = np.unique(cls * max(R, 1) + sh.router[ok])
    served = np.bincount(pairs % max(R, 1), weights=ix.class_count[pairs // max(R, 1)], minlength=R)
    return np.asarray(np.rint(served), dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Solved:
    """One strategy, solved and analyzed."""

    name: str
    plan: Plan
    ix: PlanIndex
    analysis: Analysis
    loads: tuple[FloatArray, FloatArray] | None  # writes, reads; None without a torus
    served: IntArray  # clients per router


@dataclass(frozen=True)
class Unsolved:
    """A strategy that cannot be solved for the site, and why."""

    name: str
    error: str


def solve_all(
    site: Site,
    strategies: Sequence[str],
    settings: Settings,
    progress: Progress = NO_PROGRESS,
    workload: WorkloadSpec | None = DEFAULT,
    routes: tuple[FabricRoutes | None, FabricRoutes | None] = (None, None),
) -> list[Solved | Unsolved]:
    """Each of ``strategies`` solved and analyzed (bandwidth of ``workload`` predicted, with
    OpenSM's compute and storage ``routes`` where given), in order (one tick each)."""
    out: list[Solved | Unsolved] = []
    tick = progress("strategies", len(strategies))
    for name in strategies:
        try:
            plan = solve.solve(site, name)
        except SolveError as exc:
            out.append(Unsolved(name, "; ".join(d.message for d in exc.diagnostics)))
            tick()
            continue
        ix = index_plan(site, plan, settings)
        a = analyze(
            site,
            plan,
            settings=settings,
            index=ix,
            torus=False,
            throughput=workload,
            fabric_routes=routes[0],
            storage_routes=routes[1],
        )
        out.append(Solved(name, plan, ix, a, link_load_arrays(ix), clients_per_router(ix)))
        tick()
    return out
