"""Max-min fair sharing of capacities among ranks, and the time the slowest rank needs.

A *rank* streams one file (or its part of a shared file); its data leaves over one or more
*subflows* -- one per (OST, router) it uses, carrying the fraction ``w`` of the rank's rate
(LNet round-robins over the routers of one priority, a striped file spreads over its OSTs).
Each subflow crosses a few discrete *resources* (a router, an OSS, an OST, a leaf's uplinks...)
and, on a torus, the links of its dimension-order path.  A resource of capacity ``C`` carries
``sum(w * rate)`` over its subflows.

Rates are max-min fair (progressive filling): every unfrozen rank grows at the same pace until
some resource is full; the ranks through it are frozen at that rate; repeat.  This is the
fluid picture of fair arbitration at every resource.  SeaStar's arbitration without packet age
(seed 000 s4: each merge point halves what comes from further away, ``B_link / 2^H`` for a
stream ``H`` hops away) weights the torus: where ranks meet on a full link, a rank ``H`` torus
hops from its router gets ``2^-H`` of a near rank's share (``arbitration="age"`` in
``lnetgen.throughput.predict``); the routers, ports and servers still share equally.

IOR reports bytes moved / time of the slowest rank.  With equal files, ranks that finish free
their share for the rest: :func:`completion` replays that (re-sharing whenever ranks finish;
ranks due within ``batch`` of each other finish together, which moves the result by at most that
fraction) and returns the finishing time of every rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from lnetgen import topology
from lnetgen.traffic.settings import BoolArray, FloatArray, IntArray

#: Two capacities within this fraction of full count as full (float noise of the sums).
FULL = 1e-9
#: The torus paths are laid out as a sparse link x pair matrix when they hold at most this many
#: (link, pair) entries (8 bytes + 4 bytes each); above, every load is laid out from the runs.
MAX_INCIDENCE = 4_000_000


@dataclass(frozen=True, eq=False)
class Torus:
    """The torus part: each *entry* is a rank's share (``w``) of traffic between one pair of
    chips (``pair``, an index into ``runs``, the distinct chip pairs' dimension-order paths);
    ``cap`` is each directed link's capacity (X, Y, Z, 6)."""

    dims: tuple[int, int, int]
    runs: topology.Runs
    rank: IntArray
    pair: IntArray
    w: FloatArray
    cap: FloatArray
    hops: IntArray  # per distinct pair: its path length

    def rank_hops(self, nranks: int) -> FloatArray:
        """Per rank, the hops of its torus paths, averaged by the share each carries."""
        w = np.bincount(self.rank, weights=self.w, minlength=nranks)
        h = np.bincount(self.rank, weights=self.w * self.hops[self.pair], minlength=nranks)
        return np.asarray(np.where(w > 0, h / np.where(w > 0, w, 1.0), 0.0), dtype=np.float64)

    @classmethod
    def build(
        cls,
        dims: tuple[int, int, int],
        routing: str,
        rank: IntArray,
        src: IntArray,
        dst: IntArray,
        w: FloatArray,
        cap: FloatArray,
    ) -> Torus:
        """From one row per (rank, src chip, dst chip) share; rows that repeat a rank's pair
        are merged and each distinct pair's path is laid out once."""
        chips = dims[0] * dims[1] * dims[2]
        flat_s = np.ravel_multi_index(src.T, dims).astype(np.int64)
        flat_d = np.ravel_multi_index(dst.T, dims).astype(np.int64)
        pair_key = flat_s * chips + flat_d
        keys, pair = np.unique(pair_key, return_inverse=True)
        entry_key = rank.astype(np.int64) * len(keys) + pair
        ekeys, inv = np.unique(entry_key, return_inverse=True)
        ew = np.bincount(inv, weights=w, minlength=len(ekeys))
        ps = np.stack(np.unravel_index(keys // chips, dims), axis=1)
        pd = np.stack(np.unravel_index(keys % chips, dims), axis=1)
        return cls(
            dims,
            topology.runs(ps, pd, dims, routing),
            (ekeys // len(keys)).astype(np.int64),
            (ekeys % len(keys)).astype(np.int64),
            ew.astype(np.float64),
            cap,
            topology.flow_hops(ps, pd, dims) if len(ps) else np.zeros(0, dtype=np.int64),
        )

    @cached_property
    def incidence(self) -> sp.csr_matrix | None:
        """The distinct pairs' paths as a (directed link x pair) 0/1 matrix, so that a load is
        one sparse product instead of a pass over the whole torus per axis and direction (the
        max-min loop lays loads out dozens of times per round); None when it would hold more
        than :data:`MAX_INCIDENCE` entries (bounded memory: the runs do it then)."""
        lengths = [_run_lengths(g) for g in self.runs.segments]
        if sum(int(h.sum()) for h in lengths) > MAX_INCIDENCE:
            return None
        rows: list[IntArray] = []
        cols: list[IntArray] = []
        for g, h in zip(self.runs.segments, lengths, strict=True):
            n = self.dims[g.axis]
            start = np.repeat(np.cumsum(h) - h, h)
            step = np.arange(int(h.sum()), dtype=np.int64) - start  # 0 .. h-1 in each run
            at = [np.repeat(c, h) for c in g.lo_at]
            at[g.axis] = (at[g.axis] + step) % n
            link = np.ravel_multi_index((at[0], at[1], at[2]), self.dims) * 6 + g.direction
            rows.append(link.astype(np.int64))
            cols.append(np.repeat(g.sel, h))
        nlinks = self.dims[0] * self.dims[1] * self.dims[2] * 6
        r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        m = sp.csr_matrix(
            (np.ones(len(r)), (r, c)), shape=(nlinks, self.runs.nflows), dtype=np.float64
        )
        m.sum_duplicates()
        return m

    def path_counts(self) -> FloatArray:
        """Per link, how many (rank, router) paths cross it, whatever share each carries."""
        per_pair = np.bincount(self.pair, minlength=self.runs.nflows).astype(np.float64)
        m = self.incidence
        if m is None:
            return topology.runs_loads(self.runs, per_pair)
        return np.asarray(m @ per_pair, dtype=np.float64).reshape((*self.dims, 6))

    def loads(self, rate: FloatArray) -> FloatArray:
        """Per link, what ranks at ``rate`` put on it."""
        per_pair = np.bincount(
            self.pair, weights=self.w * rate[self.rank], minlength=self.runs.nflows
        ).astype(np.float64)
        m = self.incidence
        if m is None:
            return topology.runs_loads(self.runs, per_pair)
        return np.asarray(m @ per_pair, dtype=np.float64).reshape((*self.dims, 6))

    def ranks_on(self, links: FloatArray, nranks: int) -> BoolArray:
        """Per rank: whether one of its paths crosses a link where ``links`` > 0."""
        m = self.incidence
        if m is None:
            hit = topology.runs_sums(self.runs, links) > 0
        else:
            hit = np.asarray(m.T @ links.reshape(-1)).reshape(-1) > 0
        out = np.zeros(nranks, dtype=bool)
        out[self.rank[hit[self.pair]]] = True
        return out


@dataclass(frozen=True, eq=False)
class Problem:
    """Ranks and what they cross.

    ``use[r, k]``: what resource ``r`` carries per MB/s of rank ``k`` (the fractions of its
    subflows through ``r``, summed); ``cap[r]``: its capacity (MB/s; ``inf`` where the rate is
    not known); ``torus``: the torus links, or None.
    """

    nranks: int
    use: sp.csr_matrix
    cap: FloatArray
    torus: Torus | None = None

    @cached_property
    def by_rank(self) -> tuple[IntArray, IntArray]:
        """The resources each rank crosses: (rank, resource) of every entry of ``use``, by rank
        and then resource, for finding each rank's first full resource quickly."""
        t = self.use.T.tocsr()
        t.sort_indices()
        rows = np.repeat(np.arange(self.nranks, dtype=np.int64), np.diff(t.indptr))
        return rows, t.indices.astype(np.int64)

    @property
    def served(self) -> BoolArray:
        """Ranks with a path (a resource or a torus link): the others have no route."""
        out = np.asarray(self.use.getnnz(axis=0) > 0).reshape(-1)
        if self.torus is not None:
            out[self.torus.rank] = True
        return out


@dataclass(frozen=True, eq=False)
class Shares:
    """The max-min fair rates (MB/s) and, for each rank, the resource that froze it: an id
    into ``cap``, ``-2`` for a torus link, ``-1`` for none (unbounded: no known rate limits
    it).  ``load``/``link_load`` are what the resources carry at these rates."""

    rate: FloatArray
    frozen_by: IntArray
    load: FloatArray
    link_load: FloatArray | None


def _run_lengths(g: topology.Segment) -> IntArray:
    """The number of links of each run of a segment (along its axis, doubled ring)."""
    n2 = g.shape[g.axis]
    stride = int(np.prod(g.shape[g.axis + 1 :], dtype=np.int64))
    return np.asarray((g.hi // stride) % n2 - (g.lo // stride) % n2, dtype=np.int64)


def max_min(p: Problem, alive: BoolArray | None = None, weight: FloatArray | None = None) -> Shares:
    """Max-min fair rates of the ranks in ``alive`` (all by default; the others get 0).  A
    rank no known capacity limits gets ``inf``.  ``weight``: SeaStar's age arbitration, which
    acts in the torus only -- where ranks meet on a full torus link, rank ``k`` gets a share in
    proportion to ``weight[k]``; the routers, ports, servers and OSTs share equally
    (:func:`_age`)."""
    if weight is None or p.torus is None:
        return _fill(p, alive, None)
    return _age(p, alive, weight)


def _age(p: Problem, alive: BoolArray | None, weight: FloatArray) -> Shares:
    """Weighted where ranks meet on a full torus link, equal elsewhere, in three fillings:

    1. the resources outside the torus, shared equally: what each rank could get with an
       idle torus;
    2. the torus, shared with the weights, no rank above (1): a rank that a full torus link
       stops below (1) has its *torus share* there;
    3. everything (torus links included), shared equally, no rank above its torus share
       (a resource of its own per rank); the other ranks are not capped.

    Where only the torus binds, that is the weighted filling; where no torus link fills in
    (2), the fair one (the age of packets matters only where they queue).  Where both bind, a
    torus share is what the rank gets with every rank on its links taking up to (1); if a
    server then holds one of them lower, the torus capacity it leaves goes to the uncapped
    ranks on the link, not by age: an exact sharing weighted at some resources and equal at
    others has no progressive filling, and exchanging shares between (2) and (3) until they
    agree oscillates on Spider.  A torus share holds a rank only while a link of its paths is
    full: a rank (3) stops at its share with every one of its links below capacity (a server
    held another rank on them lower than (2) assumed) has its share lifted and (3) is filled
    again, until none is left so; shares are only ever lifted, so this ends.  Without it equal
    weights could leave a link idle that the fair filling fills.  A rank stopped by its torus
    share is frozen by a torus link (``-2``)."""
    n = p.nranks
    own = sp.identity(n, format="csr")
    off = _fill(Problem(n, p.use, p.cap, None), alive, None)
    tor = _fill(Problem(n, own, off.rate, p.torus), alive, weight)
    share = np.where(tor.frozen_by == -2, tor.rate, np.inf)  # set by a full torus link
    use = sp.vstack([p.use, own], format="csr")
    while True:
        eq = _fill(Problem(n, use, np.concatenate([p.cap, share]), p.torus), alive, None)
        loose = (eq.frozen_by >= len(p.cap)) & ~_on_full_link(p, eq)
        if not loose.any():
            break
        share = np.where(loose, np.inf, share)  # no full link of its own: no torus share
    rate = eq.rate
    frozen_by = np.where(eq.frozen_by >= len(p.cap), -2, eq.frozen_by)
    finite = np.where(np.isfinite(rate), rate, 0.0)
    load = np.asarray(p.use @ finite).reshape(-1)
    return Shares(rate, frozen_by, load, eq.link_load)


def _on_full_link(p: Problem, s: Shares) -> BoolArray:
    """The ranks that cross a torus link full at the rates ``s``."""
    assert p.torus is not None and s.link_load is not None
    full = s.link_load >= p.torus.cap * (1 - FULL)
    return p.torus.ranks_on(full.astype(np.float64), p.nranks)


def _fill(p: Problem, alive: BoolArray | None, weight: FloatArray | None) -> Shares:
    """Progressive filling: unfrozen rank ``k`` grows at ``weight[k]`` (default 1) times the
    common pace until a resource or torus link it crosses is full."""
    n = p.nranks
    live: BoolArray = np.ones(n, dtype=bool) if alive is None else alive.copy()
    rate = np.zeros(n)
    frozen_by = np.full(n, -1, dtype=np.int64)
    load = np.zeros(len(p.cap))
    tor = p.torus
    link = np.zeros((*tor.dims, 6)) if tor is not None else None
    entry_rank, entry_res = p.by_rank
    active = live.copy()
    while active.any():
        grow = np.asarray(active * (weight if weight is not None else 1.0), dtype=np.float64)
        d_load = np.asarray(p.use @ grow).reshape(-1)
        d_link = tor.loads(grow) if tor is not None else None
        if d_link is not None and d_link.size:
            # the difference-array layout leaves ~1e-16 residues on idle links: not load
            d_link = np.where(d_link > 1e-12 * float(d_link.max()), d_link, 0.0)
        lroom = None
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d_load > 0, (p.cap - load) / d_load, np.inf)
            step = float(room.min()) if len(room) else np.inf
            if tor is not None and d_link is not None and link is not None:
                lroom = np.where(d_link > 0, (tor.cap - link) / d_link, np.inf)
                step = min(step, float(lroom.min()))
        # the constraint(s) that set the step are full, whatever float noise says
        tight = step + 1e-12 * abs(step)
        if not np.isfinite(step):
            rate[active] = np.inf  # nothing known limits the rest
            break
        step = max(step, 0.0)
        rate[active] += step * grow[active]
        load += step * d_load
        full = (d_load > 0) & (load >= p.cap * (1 - FULL))
        full |= room <= tight
        # per rank: the first (lowest-numbered) full resource it crosses
        on_full = np.nonzero(full[entry_res])[0]
        first = np.full(n, -1, dtype=np.int64)
        ranks, at = np.unique(entry_rank[on_full], return_index=True)
        first[ranks] = entry_res[on_full[at]]
        hit = first >= 0
        if tor is not None and d_link is not None and link is not None:
            link += step * d_link
            lfull = (d_link > 0) & (link >= tor.cap * (1 - FULL))
            if lroom is not None:
                lfull |= lroom <= tight
            if lfull.any():
                on = tor.ranks_on(lfull.astype(np.float64), n)
                first = np.where(~hit & on, -2, first)
                hit |= on
        stop = hit & active
        if not stop.any():
            break
        frozen_by[stop] = first[stop]
        active &= ~stop
    rate[~live] = 0.0
    finite = np.where(np.isfinite(rate), rate, 0.0)
    final_load = np.asarray(p.use @ finite).reshape(-1)
    final_link = tor.loads(finite) if tor is not None else None
    return Shares(rate, frozen_by, final_load, final_link)


def completion(
    p: Problem,
    batch: float = 0.01,
    max_rounds: int = 400,
    weight: FloatArray | None = None,
    start: Shares | None = None,
    endless: BoolArray | None = None,
) -> FloatArray:
    """When each rank finishes streaming one unit of data (MB: the times are in seconds per MB
    of each rank's file), re-sharing the capacities whenever ranks finish.

    Ranks due within ``batch`` (a fraction of the time to the next finish) finish in the same
    round; after ``max_rounds`` rounds the rest keep their last rates.  A rank with no known
    limit gets time 0 (nothing in the inventory bounds it).  ``start``: the rates of every rank
    (``max_min(p, weight=weight)``) when the caller has them already.  ``endless`` ranks
    (other jobs' streams) never finish: they hold their share until the others are done, and
    their time is ``inf``.
    """
    n = p.nranks
    forever: BoolArray = np.zeros(n, dtype=bool) if endless is None else endless
    left = np.where(forever, np.inf, 1.0)
    done_at = np.where(forever, np.inf, 0.0)
    alive = np.ones(n, dtype=bool)
    now = 0.0
    for _ in range(max_rounds):
        if not (alive & ~forever).any():
            return done_at
        sh = start if start is not None and alive.all() else max_min(p, alive, weight)
        r = sh.rate
        alive &= np.isfinite(r) | forever  # no known limit: done at once
        if not (alive & ~forever).any():
            return done_at
        with np.errstate(divide="ignore", invalid="ignore"):
            due = np.where(alive & ~forever & (r > 0), left / np.where(r > 0, r, 1.0), np.inf)
        dt = float(due.min())
        if not np.isfinite(dt):
            break
        finish = alive & ~forever & (due <= dt * (1 + batch))
        now += dt
        with np.errstate(invalid="ignore"):  # inf - inf of an unbounded endless rank, unused
            left = np.where(alive & ~forever, left - r * dt, left)
        done_at[finish] = now + np.maximum(left[finish], 0) / np.maximum(r[finish], 1e-300)
        left[finish] = 0.0
        alive &= ~finish
    rest = alive & ~forever
    if rest.any():
        sh = max_min(p, alive, weight)
        done_at[rest] = now + left[rest] / np.maximum(sh.rate[rest], 1e-300)
    return done_at
