"""Where to put routers: move up to N routers to free router slots (``topology.router_slots``)
so that a workload's predicted bandwidth is highest (``lnetgen.throughput``), the slowest
rank's rate breaking ties.

Seed 001 §III: dimension-order routing loads only two of a router's six links, and a router's
torus position decides which clients reach it through which links; ORNL moved routers to
spread load.  The plan is kept (the same routes, the routers at new positions), so the advice
is for layouts whose routes do not depend on positions; ``nearest-neighbor`` should be solved
again after the move.

A placement is judged on every seed of the workload's draw (``lnetgen.advise.seeds``: five
for ``nodes=random`` or ``background``, one otherwise): its worth is its smallest gain over
the seeds, and it is advised only when that gain is positive -- a gain on every draw, not on
one.  A placement is predicted seed after seed and dropped at the first seed where it cannot
beat the best so far, so most cost one prediction.

* **Exact** when every placement fits in ``budget``: every choice of up to N routers and as
  many free slots is judged.
* **Greedy** otherwise: N rounds, each making the single move (router -> free slot) that
  judges best, among the routers farthest from the workload's nodes (the first seed's) and the
  free slots nearest to them (``budget`` placements in all).  Its bound: the prediction with the
  torus unconstrained -- what no placement can beat, since moving routers changes only torus
  paths.

A move changes the torus paths only: the plan is indexed and the ranks and their resources are
built once per seed, and each prediction lays out the torus again and solves
(``lnetgen.throughput.moved``), the same prediction as the moved site's.

The clients stay where they are in every prediction, so what a slot may be depends on how the
inventory lays them out (``layout``, ``lnetgen.inventory.torus.Layout``; None: not known, every
free slot is tried and nothing is said).  With fixed positions (a coordinates CSV, or
``skip_routers: false``) a slot whose chip has no node left for a router (its clients and
routers fill ``nodes_per_chip``) is not free: the edited inventory would be E-TORUS-FULL, and
validate already warns about such a slot (W-SLOT-CLIENTS).  With the linear rule and
``skip_routers: true`` the edited inventory validates whatever the slot holds, because the rule
lays the clients around the routers again: every client numbered between a router's old and
new position shifts by one node slot.  The advice says so (``relaid``: how many change chip,
the first and last of them) -- an administrator must know that the edit moves clients on paper
(the job's nodes, a placement made before) and that the prediction kept them where they were.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from lnetgen import nodes, topology
from lnetgen.advise.seeds import seeds_of
from lnetgen.inventory.torus import Layout, linear_chips
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.throughput import Prediction, WorkloadSpec, build_ranks, predict
from lnetgen.throughput.moved import Coords, MovedRouters
from lnetgen.throughput.workload import NODE_CHOICES
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
class SeedGain:
    """One seed's draw of the workload: the aggregate and the slowest rank's rate before and
    after the moves (MB/s, None: n/a), and whether the moves gain on it -- as the search
    judged it: the aggregate, then the slowest rank's rate, a difference within the solver's
    rounding (``_TOLERANCE``) no gain."""

    seed: int
    before_mb_s: float | None
    after_mb_s: float | None
    before_rank_min_mb_s: float | None
    after_rank_min_mb_s: float | None
    gained: bool


@dataclass(frozen=True)
class RouterAdvice:
    site: str
    strategy: str
    workload: str
    count: int
    method: str  # exact | greedy
    slots: int  # free slots considered
    evaluated: int  # predictions made, over every seed
    moves: tuple[Move, ...]
    edits: tuple[str, ...]
    before: Prediction  # the first seed's
    after: Prediction  # the first seed's (``before`` when no move is advised)
    #: the torus unconstrained, first seed: no placement predicts more (None: n/a, or a
    #: workload with ``background``, whose streams would take what the torus frees)
    bound_mb_s: float | None
    #: what ``bound_mb_s`` is: "torus" the prediction with the torus unconstrained (None when
    #: that figure is n/a), "background" none -- the workload's other jobs would take what the
    #: torus frees
    bound_reason: Literal["torus", "background"]
    #: the draws judged (``lnetgen.advise.seeds``): a move is advised only when it gains on
    #: every one
    seeds: tuple[int, ...] = ()
    by_seed: tuple[SeedGain, ...] = ()
    #: the best placement on the first seed alone, when that is not advised (its gain does
    #: not hold on every seed): its edits and its figures per seed
    rejected: tuple[str, ...] = ()
    rejected_by_seed: tuple[SeedGain, ...] = ()
    #: the linear coordinate rule re-lays clients when the advised moves are made: how many
    #: clients change chip, and the first and last of them (client order)
    relaid: int = 0
    relaid_span: tuple[str, ...] = ()
    #: the workload's own nodes (a node set it names) among those: the prediction does not
    #: hold for the layout the edit makes (their chips, and so their paths, change)
    relaid_job: tuple[str, ...] = ()
    #: why no move is weighed ("" when the search ran): a site without the torus link rate
    no_advice: str = ""


#: A difference smaller than this fraction of the figure is no gain (rounding of the solver).
_TOLERANCE = 1e-9

Gain = tuple[float, float]
NO_GAIN: Gain = (0.0, 0.0)


def _score(p: Prediction) -> Gain:
    """Higher is better: the IOR aggregate, then the slowest rank's rate."""
    return (p.aggregate_mb_s or 0.0, p.rank_min_mb_s or 0.0)


def _gain(after: Prediction, before: Prediction) -> Gain:
    """``after`` over ``before``: the aggregate's gain, then the slowest rank's (MB/s)."""
    out = []
    for a, b in zip(_score(after), _score(before), strict=True):
        d = a - b
        out.append(0.0 if abs(d) <= _TOLERANCE * max(abs(b), 1.0) else d)
    return (out[0], out[1])


class _Judge:
    """Predicts placements on every seed of the workload's draw, each seed's ranks built
    once (``MovedRouters``); a placement's worth is its smallest gain over the seeds."""

    def __init__(self, site: Site, plan: Plan, spec: WorkloadSpec) -> None:
        self.seeds = seeds_of(spec)
        first = MovedRouters(site, plan, replace(spec, seed=self.seeds[0]))
        self.movers = [first] + [
            MovedRouters(site, plan, replace(spec, seed=s), index=first.ix) for s in self.seeds[1:]
        ]
        self.ix = first.ix
        self.before = [m.predict({}) for m in self.movers]

    @property
    def predictions(self) -> int:
        return sum(m.predictions for m in self.movers)

    def first(self, moves: dict[str, Coords]) -> tuple[Gain, Prediction]:
        """The gain on the first seed alone."""
        p = self.movers[0].predict(moves)
        return _gain(p, self.before[0]), p

    def worst(
        self, moves: dict[str, Coords], floor: Gain, first: tuple[Gain, Prediction]
    ) -> tuple[Gain, list[Prediction]] | None:
        """The smallest gain over the seeds and the predictions, or None as soon as one seed
        gains no more than ``floor`` (the placement cannot beat it)."""
        low, p = first
        if low <= floor:
            return None
        out = [p]
        for mover, before in zip(self.movers[1:], self.before[1:], strict=True):
            q = mover.predict(moves)
            low = min(low, _gain(q, before))
            if low <= floor:
                return None
            out.append(q)
        return low, out

    def all_seeds(self, moves: dict[str, Coords]) -> list[Prediction]:
        return [m.predict(moves) for m in self.movers]

    def weigh(self, moves: dict[str, Coords], best: Best, alone: Alone) -> tuple[Best, Alone]:
        """Try the placement ``moves``: the best placement so far over every seed, and the
        best on the first seed alone, each replaced when ``moves`` beats it."""
        first = self.first(moves)
        if first[0] > alone[0]:
            alone = (first[0], moves)
        tried = self.worst(moves, best[0], first)
        if tried is not None:
            best = (tried[0], moves, tried[1])
        return best, alone

    def figures(self, after: list[Prediction]) -> tuple[SeedGain, ...]:
        return tuple(
            SeedGain(
                s,
                b.aggregate_mb_s,
                a.aggregate_mb_s,
                b.rank_min_mb_s,
                a.rank_min_mb_s,
                _gain(a, b) > NO_GAIN,
            )
            for s, b, a in zip(self.seeds, self.before, after, strict=True)
        )


Best = tuple[Gain, dict[str, Coords], list[Prediction]]
#: The best placement on the first seed alone: its gain there, the moves.
Alone = tuple[Gain, dict[str, Coords]]


def advise_routers(
    site: Site,
    plan: Plan,
    spec: WorkloadSpec,
    count: int = 1,
    budget: int = 400,
    layout: Layout | None = None,
) -> RouterAdvice:
    """Move up to ``count`` routers to free slots (see the module docstring; ``layout``: how
    the inventory lays out the clients).  Raises ``InputError`` (E-USAGE) without a torus,
    without free slots, or for a count below 1."""
    t = site.torus
    if t is None:
        raise input_error("E-USAGE", "advise routers needs a torus client side")
    if count < 1:
        raise input_error("E-USAGE", f"--count must be at least 1, not {count}")
    taken = {r.coords for r in site.routers}
    free = [s for s in dict.fromkeys(t.slots) if s not in taken]
    full = _full_slots(site, free) if layout is not None and not layout.relays else set()
    free = [s for s in free if s not in full]
    if not free:
        why = f" ({len(full)} hold clients at fixed positions: no node left)" if full else ""
        raise input_error(
            "E-USAGE",
            f"no free router slot{why}: list candidate positions in topology.router_slots",
        )
    judge = _Judge(site, plan, spec)
    if site.rates.torus_link is None:
        return _no_rate(site, plan, spec, count, len(free), judge)
    names = [r.name for r in site.routers]
    total = sum(math.comb(len(names), k) * math.perm(len(free), k) for k in range(1, count + 1))
    best: Best = (NO_GAIN, {}, list(judge.before))
    # the best placement on the first seed alone (its gain there, the moves)
    alone: Alone = (NO_GAIN, {})
    if total <= budget:
        method = "exact"
        for k in range(1, count + 1):
            for who in itertools.combinations(names, k):
                for where in itertools.permutations(free, k):
                    best, alone = judge.weigh(dict(zip(who, where, strict=True)), best, alone)
    else:
        method = "greedy"
        # the candidates: near the first seed's nodes (each is judged on every seed)
        ranks = build_ranks(site, plan, judge.ix, replace(spec, seed=judge.seeds[0]))
        chips = np.unique(site.clients.coords[ranks.node].astype(np.int64), axis=0)
        best, alone = _greedy(site, chips, free, count, budget - 1, best, judge)
    coords = {r.name: r.coords for r in site.routers}
    index = {r.name: i for i, r in enumerate(site.routers)}

    def as_moves(at: dict[str, Coords]) -> tuple[Move, ...]:
        return tuple(
            Move(n, coords[n] or (0, 0, 0), c)
            for n, c in sorted(at.items(), key=lambda m: index[m[0]])
        )

    chosen = as_moves(best[1])
    rejected: tuple[Move, ...] = ()
    rejected_by_seed: tuple[SeedGain, ...] = ()
    if alone[1] and alone[1] != best[1] and alone[0] > NO_GAIN:
        rejected = as_moves(alone[1])
        rejected_by_seed = judge.figures(judge.all_seeds(alone[1]))
    bound_mb_s: float | None = None
    if not spec.background:  # other jobs' streams would take what the torus frees
        unbounded = replace(site, rates=replace(site.rates, torus_link=None))
        # the index does not depend on the rates
        bound_mb_s = predict(
            unbounded,
            plan,
            replace(spec, seed=judge.seeds[0]),
            index=replace(judge.ix, site=unbounded, memo={}),
        ).aggregate_mb_s
    job = () if spec.nodes in NODE_CHOICES else _job_nodes(spec.nodes)
    relaid = (
        _relaid(site, layout, best[1], job) if layout is not None and layout.relays else (0, (), ())
    )
    return RouterAdvice(
        site.name,
        plan.strategy,
        spec.label(),
        count,
        method,
        len(free),
        judge.predictions,
        chosen,
        tuple(m.edit(index[m.router]) for m in chosen),
        judge.before[0],
        best[2][0],
        bound_mb_s,
        "background" if spec.background else "torus",
        judge.seeds,
        judge.figures(best[2]),
        tuple(m.edit(index[m.router]) for m in rejected),
        rejected_by_seed,
        *relaid,
    )


def _no_rate(
    site: Site, plan: Plan, spec: WorkloadSpec, count: int, slots: int, judge: _Judge
) -> RouterAdvice:
    """Decision: without the torus link rate a move changes no figure -- moving a router
    changes torus paths only, and an unrated link limits nothing -- so "keep the routers
    where they are" would be a verdict the model cannot give.  No move is weighed; the advice
    says what it needs (as ``advise stripes`` does without the OST rate), with the figure the
    workload has now."""
    return RouterAdvice(
        site.name,
        plan.strategy,
        spec.label(),
        count,
        "none",
        slots,
        judge.predictions,
        (),
        (),
        judge.before[0],
        judge.before[0],
        None,
        "background" if spec.background else "torus",
        judge.seeds,
        judge.figures(judge.before),
        no_advice="needs the torus link rate (the site gives none): no move can change a figure",
    )


def _job_nodes(text: str) -> Collection[str]:
    """The nodes a workload names as a node set (not expanded: it may be large)."""
    try:
        return nodes.nodeset(text)  # type: ignore[no-any-return]
    except nodes.NodeSyntaxError:
        return ()


def _full_slots(site: Site, slots: list[Coords]) -> set[Coords]:
    """The slots whose chip has no node left for one more router (clients and routers fill
    ``nodes_per_chip``)."""
    t = site.torus
    assert t is not None
    X, Y, _ = t.dims
    c = site.clients.coords.astype(np.int64)
    flat = np.sort(c[:, 0] + X * (c[:, 1] + Y * c[:, 2]))
    routers = [r.coords for r in site.routers]
    out = set()
    for s in slots:
        key = s[0] + X * (s[1] + Y * s[2])
        held = int(np.searchsorted(flat, key + 1) - np.searchsorted(flat, key))
        if held + routers.count(s) >= t.nodes_per_chip:
            out.add(s)
    return out


def _relaid(
    site: Site, layout: Layout, moves: dict[str, Coords], job: Collection[str] = ()
) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """How many clients the linear rule puts on another chip once ``moves`` are made in the
    inventory, the first and last of them in client order, and those of ``job`` (the
    workload's own nodes) among them, in client order."""
    t = site.torus
    if t is None or not moves:
        return 0, (), ()
    n = len(site.clients)
    now = [r.coords for r in site.routers if r.coords is not None]
    then = [moves.get(r.name, r.coords) for r in site.routers]
    a = linear_chips(t.dims, t.nodes_per_chip, layout, now, n)
    b = linear_chips(t.dims, t.nodes_per_chip, layout, [c for c in then if c is not None], n)
    if a is None or b is None:
        return 0, (), ()
    moved = np.nonzero(a != b)[0]
    ends = dict.fromkeys(site.clients.names[int(i)] for i in moved[[0, -1]]) if len(moved) else {}
    names = site.clients.names
    ours = tuple(names[int(i)] for i in moved if names[int(i)] in job)
    return len(moved), tuple(ends), ours


def _greedy(
    site: Site,
    chips: npt.NDArray[np.int64],
    free: list[Coords],
    count: int,
    budget: int,
    best: Best,
    judge: _Judge,
) -> tuple[Best, Alone]:
    """``count`` rounds of the best single move among the routers farthest (mean hops) from
    the workload's chips and the free slots nearest to them, within ``budget`` placements;
    and the best placement tried on the first seed alone."""
    t = site.torus
    assert t is not None
    sample = chips[:: max(len(chips) // 256, 1)]

    def mean_hops(c: Coords) -> float:
        return float(topology.torus_hops(np.asarray([c]), sample, t.dims).mean())

    side = max(int(math.sqrt(max(budget // count, 1))), 1)
    moves = dict(best[1])
    alone: Alone = (NO_GAIN, {})
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
                round_best, alone = judge.weigh({**moves, n: slot}, round_best, alone)
        if round_best is best:
            break
        best = round_best
        moves = dict(best[1])
    return best, alone
