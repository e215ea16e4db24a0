"""Weighing two stripe layouts against each other by the throughput model, for the same ranks
on every seed of their draw (``lnetgen.advise.seeds``).

``advise stripes`` chooses between layouts that seed 001's arithmetic prefers and ones the
model may predict more for; each choice is kept as a :class:`Weighed` -- both layouts, both
figures per seed and why the one advised was kept -- so that the advice carries the figures
it rests on:

* a stripe count that is a multiple of the OSTs behind a group (every group's routers an
  equal share) against the widest count the stripe limit allows;
* a file on one pool of whole groups against one file at the single-file count;
* a job's hand-picked OSTs (``-o LIST``, the groups nearest to it) against Lustre's own
  allocation at the same width (``-c N``, the model's default OST choice).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lnetgen.advise.seeds import seeds_of
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.throughput import Prediction, WorkloadSpec, predict
from lnetgen.traffic import PlanIndex

#: A figure within this fraction of another is the same figure (the solver's rounding).
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Weighed:
    """Two layouts weighed for the advice: ``kept`` (advised, or judged when no advice is
    given) and ``other``, with their aggregates per seed (MB/s, None: n/a; the seeds of the
    advice's ``judged``, fewer when a figure needs a rate the site lacks) and why ``kept``."""

    kept: str
    kept_mb_s: tuple[float | None, ...]
    other: str
    other_mb_s: tuple[float | None, ...]
    why: str
    #: why the figures are upper bounds (``Prediction.why_bound`` of the first that is one),
    #: "" when they are predictions
    bound: str = ""


def needs(*predictions: Prediction | None) -> str:
    """``no advice: needs ...``: the OST rate, missing on any of ``predictions``' paths, or a
    figure the model could not give; "" when every figure is known."""
    for p in predictions:
        if p is None or "ost" in p.unknown:
            return "needs the ost rate (the site gives none)"
    for p in predictions:
        if p is not None and p.aggregate_mb_s is None:
            return "needs the rates of " + ", ".join(p.unknown)
    return ""


class Predictor:
    """Predictions of workloads derived from ``base`` (the advice's ranks), each made once."""

    def __init__(
        self,
        site: Site,
        plan: Plan,
        ix: PlanIndex,
        base: WorkloadSpec,
        model: Callable[..., Prediction] = predict,
    ) -> None:
        self.site, self.plan, self.ix, self.base = site, plan, ix, base
        self.seeds = seeds_of(base)
        self.memo: dict[WorkloadSpec, Prediction] = {}
        self.model = model

    @property
    def ranks(self) -> int:
        assert self.base.ranks is not None
        return self.base.ranks

    def predict(self, spec: WorkloadSpec) -> Prediction:
        if spec not in self.memo:
            self.memo[spec] = self.model(self.site, self.plan, spec, index=self.ix)
        return self.memo[spec]

    def known(self, spec: WorkloadSpec, p: Prediction) -> None:
        """``p`` is ``spec``'s prediction, made elsewhere."""
        self.memo.setdefault(spec, p)

    def pair(self, a: WorkloadSpec, b: WorkloadSpec) -> list[tuple[int, Prediction, Prediction]]:
        """``a`` and ``b`` on each seed, the first first; once a figure needs a rate the site
        lacks the other seeds are not predicted."""
        out: list[tuple[int, Prediction, Prediction]] = []
        for seed in self.seeds:
            pa = self.predict(_seeded(a, seed))
            pb = self.predict(_seeded(b, seed))
            out.append((seed, pa, pb))
            if needs(pa, pb):
                break
        return out


def _seeded(spec: WorkloadSpec, seed: int) -> WorkloadSpec:
    from dataclasses import replace

    return replace(spec, seed=seed)


def compared(rows: list[tuple[int, Prediction, Prediction]]) -> list[float] | None:
    """``a - b`` per seed (MB/s), a difference within ``TOLERANCE`` none; None when a figure
    is not known on some seed (the model cannot weigh them)."""
    out = []
    for _, a, b in rows:
        if needs(a, b):
            return None
        assert a.aggregate_mb_s is not None and b.aggregate_mb_s is not None
        d = a.aggregate_mb_s - b.aggregate_mb_s
        out.append(0.0 if abs(d) <= TOLERANCE * max(abs(b.aggregate_mb_s), 1.0) else d)
    return out


def weighed(
    rows: list[tuple[int, Prediction, Prediction]], keep_a: bool, a: str, b: str, why: str
) -> Weighed:
    """The record of ``rows`` (``a``'s and ``b``'s predictions per seed), ``a`` kept or not."""
    fa = tuple(r[1].aggregate_mb_s for r in rows)
    fb = tuple(r[2].aggregate_mb_s for r in rows)
    bound = next((p.why_bound for r in rows for p in r[1:] if p.why_bound), "")
    return Weighed(a, fa, b, fb, why, bound) if keep_a else Weighed(b, fb, a, fa, why, bound)


__all__ = ["TOLERANCE", "Predictor", "Weighed", "compared", "needs", "weighed"]
