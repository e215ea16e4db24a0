"""Predictions of one workload with routers moved to other torus positions, the plan kept
(``lnetgen advise routers`` weighs hundreds of moves).

A move changes the position of a router and nothing else: the plan's routes, the ranks, their
OSTs and every resource outside the torus stay the same.  So the plan is indexed once, and --
unless the ranks' nodes or OSTs are chosen by distance to the routers (``nodes=placed``,
``ost_choice=nearest``) -- the ranks and the resources they cross are built once; each move
lays out only the torus paths again and solves.  A move of routers no subflow crosses is the
prediction without it.  Each prediction equals :func:`lnetgen.throughput.predict` on the site
and plan with the routers moved (``moved``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.throughput.predict import Prediction, _bounds, _sources, predict, prepare, solved
from lnetgen.throughput.problem import torus_of
from lnetgen.throughput.share import Problem
from lnetgen.throughput.workload import WorkloadSpec
from lnetgen.traffic import PlanIndex, index_plan

Coords = tuple[int, int, int]


def moved(site: Site, plan: Plan, moves: Mapping[str, Coords]) -> tuple[Site, Plan]:
    """The site and the plan with the routers in ``moves`` at their new positions (the plan
    carries router positions for the traffic model)."""
    routers = tuple(
        replace(r, coords=moves[r.name]) if r.name in moves else r for r in site.routers
    )
    planned = tuple(
        replace(r, coords=moves[r.name]) if r.name in moves else r for r in plan.routers
    )
    return replace(site, routers=routers), replace(plan, routers=planned)


def _moved_index(ix: PlanIndex, site: Site, plan: Plan) -> PlanIndex:
    """``index_plan(site, plan)`` for ``site``/``plan`` that differ from ``ix``'s in router
    positions only: nothing else of an index depends on them (the tables derived lazily,
    ``memo``, start empty)."""
    coords = None
    if ix.router_coords is not None:
        at = {r.name: r.coords for r in plan.routers}
        coords = np.asarray([at[n] for n in ix.routers], dtype=np.int64).reshape(-1, 3)
    return replace(ix, site=site, plan=plan, router_coords=coords, memo={})


class MovedRouters:
    """``predict(moves)``: ``spec`` on ``site``/``plan`` with the routers of ``moves`` (name
    -> torus position) moved; ``predictions`` counts the calls."""

    def __init__(
        self, site: Site, plan: Plan, spec: WorkloadSpec, index: PlanIndex | None = None
    ) -> None:
        self.site, self.plan, self.spec = site, plan, spec
        self.ix = index or index_plan(site, plan)
        self.predictions = 0
        self._fixed = spec.nodes != "placed" and spec.ost_choice != "nearest"
        if not self._fixed:  # the ranks depend on the router positions: built per move
            return
        self._built, self._njob, self._nodes = prepare(
            site, plan, self.ix, spec, keep_subflows=True
        )
        self._bounds = _bounds(self._built.problem, self._built, self._njob)
        # the rates' entries: of the resources the job crosses outside the torus paths, and of
        # the torus links whatever the paths -- the same for every move
        self._sources = _sources(site, self._built.problem, self._built, self._njob)
        assert self._built.subflows is not None
        self._crossed = frozenset(
            self.ix.routers[r] for r in np.unique(self._built.subflows.router).tolist()
        )
        self._unmoved: Prediction | None = None

    def predict(self, moves: Mapping[str, Coords]) -> Prediction:
        self.predictions += 1
        site, plan = moved(self.site, self.plan, moves)
        ix = _moved_index(self.ix, site, plan)
        if not self._fixed:
            return predict(site, plan, self.spec, index=ix)
        if not self._crossed.intersection(moves) and self._unmoved is not None:
            return self._unmoved  # the same subflows on the same paths
        built, subs = self._built, self._built.subflows
        assert subs is not None
        p = built.problem
        torus = torus_of(site, ix.router_coords, subs)
        problem = Problem(p.nranks, p.use, p.cap, torus)
        problem.__dict__["by_rank"] = p.by_rank  # of ``use``: the same (a cached property)
        out = solved(
            site,
            plan,
            self.spec,
            replace(built, problem=problem),
            self._njob,
            self._nodes,
            bounds=dict(self._bounds),
            sources=dict(self._sources),
        )
        if not self._crossed.intersection(moves):
            self._unmoved = out
        return out


__all__ = ["Coords", "MovedRouters", "moved"]
