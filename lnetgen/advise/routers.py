"""Where to put routers: move up to N routers to free router slots (``topology.router_slots``)
so that a workload's predicted bandwidth is highest (``lnetgen.throughput``), the fullest torus
link breaking ties.

Seed 001 §III: dimension-order routing loads only two of a router's six links, and a router's
torus position decides which clients reach it through which links; ORNL moved routers to
spread load.  The plan is kept (the same routes, the routers at new positions), so the advice
is for layouts whose routes do not depend on positions; ``nearest-neighbor`` should be solved
again after the move.

* **Exact** when every placement fits in ``budget`` evaluations: every choice of up to N
  routers and as many free slots is predicted.
* **Greedy** otherwise: N rounds, each making the single move (router -> free slot) that
  predicts best, among the routers whose paths carry the most torus load and the free slots
  nearest the workload's nodes (``budget`` evaluations in all).  Its bound: the prediction with
  the torus unconstrained -- what no placement can beat, since moving routers changes only
  torus paths.

A move changes the torus paths only: the plan is indexed and the ranks and their resources are
built once, and each prediction lays out the torus again and solves
(``lnetgen.throughput.moved``), the same prediction as the moved site's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from lnetgen import topology
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.throughput import Prediction, WorkloadSpec, build_ranks, predict
from lnetgen.throughput.moved import Coords, MovedRouters
from lnetgen.traffic import input_error


@dataclass(frozen=True)
class Move:
    router: str
    old: Coords
    new: Coords

    def edit(self, index: int) -> str:
        """The inventory edit: ``routers[i].coords``."""
        return f"routers[{index}] ({self.router}).coords: {list(self.old)} -> {list(self.new)}"


@dataclass(frozen=True)
class RouterAdvice:
    site: str
    strategy: str
    workload: str
    count: int
    method: str  # exact | greedy
    slots: int  # free slots considered
    evaluated: int
    moves: tuple[Move, ...]
    edits: tuple[str, ...]
    before: Prediction
    after: Prediction
    bound_mb_s: float | None  # torus unconstrained: no placement predicts more


def _score(p: Prediction) -> tuple[float, float]:
    """Higher is better: the IOR aggregate, then the slowest rank's rate."""
    return (p.aggregate_mb_s or 0.0, p.rank_min_mb_s or 0.0)


def advise_routers(
    site: Site,
    plan: Plan,
    spec: WorkloadSpec,
    count: int = 1,
    budget: int = 400,
) -> RouterAdvice:
    """Move up to ``count`` routers to free slots (see the module docstring).  Raises
    ``InputError`` (E-USAGE) without a torus, without free slots, or for a count below 1."""
    t = site.torus
    if t is None:
        raise input_error("E-USAGE", "advise routers needs a torus client side")
    if count < 1:
        raise input_error("E-USAGE", f"--count must be at least 1, not {count}")
    taken = {r.coords for r in site.routers}
    free = [s for s in dict.fromkeys(t.slots) if s not in taken]
    if not free:
        raise input_error(
            "E-USAGE",
            "no free router slot: list candidate positions in topology.router_slots",
        )
    mover = MovedRouters(site, plan, spec)
    judge = mover.predict
    before = judge({})
    names = [r.name for r in site.routers]
    total = sum(math.comb(len(names), k) * math.perm(len(free), k) for k in range(1, count + 1))
    best: tuple[tuple[float, float], dict[str, Coords], Prediction] = (_score(before), {}, before)
    if total <= budget:
        method = "exact"
        for k in range(1, count + 1):
            for who in itertools.combinations(names, k):
                for where in itertools.permutations(free, k):
                    moves = dict(zip(who, where, strict=True))
                    p = judge(moves)
                    if _score(p) > best[0]:
                        best = (_score(p), moves, p)
    else:
        method = "greedy"
        ranks = build_ranks(site, plan, mover.ix, spec)
        chips = np.unique(site.clients.coords[ranks.node].astype(np.int64), axis=0)
        best = _greedy(site, chips, free, count, budget - 1, best, judge)
    coords = {r.name: r.coords for r in site.routers}
    index = {r.name: i for i, r in enumerate(site.routers)}
    chosen = tuple(
        Move(n, coords[n] or (0, 0, 0), c)
        for n, c in sorted(best[1].items(), key=lambda m: index[m[0]])
    )
    unbounded = replace(site, rates=replace(site.rates, torus_link=None))
    # the index does not depend on the rates
    bound = predict(unbounded, plan, spec, index=replace(mover.ix, site=unbounded, memo={}))
    return RouterAdvice(
        site.name,
        plan.strategy,
        spec.label(),
        count,
        method,
        len(free),
        mover.predictions,
        chosen,
        tuple(m.edit(index[m.router]) for m in chosen),
        before,
        best[2],
        bound.aggregate_mb_s,
    )


def _greedy(
    site: Site,
    chips: npt.NDArray[np.int64],
    free: list[Coords],
    count: int,
    budget: int,
    best: tuple[tuple[float, float], dict[str, Coords], Prediction],
    judge: Callable[[dict[str, Coords]], Prediction],
) -> tuple[tuple[float, float], dict[str, Coords], Prediction]:
    """``count`` rounds of the best single move among the routers farthest (mean hops) from
    the workload's chips and the free slots nearest to them, within ``budget`` predictions."""
    t = site.torus
    assert t is not None
    sample = chips[:: max(len(chips) // 256, 1)]

    def mean_hops(c: Coords) -> float:
        return float(topology.torus_hops(np.asarray([c]), sample, t.dims).mean())

    side = max(int(math.sqrt(max(budget // count, 1))), 1)
    moves = dict(best[1])
    for _ in range(count):
        placed = {r.name: moves.get(r.name, r.coords or (0, 0, 0)) for r in site.routers}
        movable = sorted(
            (n for n in placed if n not in moves), key=lambda n: (-mean_hops(placed[n]), n)
        )[:side]
        used = set(moves.values())
        open_slots = sorted((s for s in free if s not in used), key=lambda s: (mean_hops(s), s))
        round_best = best
        for n in movable:
            for slot in open_slots[:side]:
                trial = {**moves, n: slot}
                p = judge(trial)
                if _score(p) > round_best[0]:
                    round_best = (_score(p), trial, p)
        if round_best is best:
            break
        best = round_best
        moves = dict(best[1])
    return best
