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

Two limitations of that weighting, kept as they are: (a) ``H`` is a rank's whole path, the
hops from the rank to its router, not the hops from the rank to the link where the streams
merge, which is what halves a stream under seed 000's rule.  Streams bound for different
routers that share one link are weighed by their whole paths: on an 8-chip ring (30 MB/s
links) a rank 2 hops from rtr01 and a rank 4 hops from rtr02 sharing link (2,0,0)X+ got 24
and 6 MB/s, where the merge-point rule gives the rank nearer that link the larger share
whatever lies beyond it.  A weight per (rank, link) has no single progressive filling (a
rank's pace would depend on which link stops it), so no small change gives the merge-point
rule.  (b) A rank with several gateways (or OSTs behind several routers) has one weight, from
the mean of its paths' hop counts weighted by the share each carries (``Torus.rank_hops``),
not one per path.

IOR reports bytes moved / time of the slowest rank.  With equal files, ranks that finish free
their share for the rest: :func:`completion` replays that (re-sharing whenever ranks finish;
ranks due within ``batch`` of each other finish together, which moves the result by at most that
fraction) and returns the finishing time of every rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from lnetgen import topology
from lnetgen.throughput.fill import FULL, MIN_CUT, Layout, Links, columns, fill
from lnetgen.traffic.settings import BoolArray, FloatArray, IntArray

#: The torus paths are laid out as a sparse link x pair matrix when they hold at most this many
#: (link, pair) entries (8 bytes + 4 bytes each, and 4 more indexed by link for a filling);
#: above, every load is laid out from the runs.
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
        key = np.asarray(flat_s * chips + flat_d, dtype=np.int64)
        return cls.of_pairs(dims, routing, rank, key, w, cap)

    @classmethod
    def of_pairs(
        cls,
        dims: tuple[int, int, int],
        routing: str,
        rank: IntArray,
        pair_key: IntArray,
        w: FloatArray,
        cap: FloatArray,
    ) -> Torus:
        """:meth:`build` from each row's chip pair as ``src * chips + dst`` (flat chip
        indices): a row's three coordinates twice are not laid out (bounded memory)."""
        keys, pair = np.unique(pair_key, return_inverse=True)
        entry_key = rank.astype(np.int64) * len(keys) + pair.reshape(-1)
        del pair
        ekeys, inv = np.unique(entry_key, return_inverse=True)
        del entry_key
        ew = np.bincount(inv.reshape(-1), weights=w, minlength=len(ekeys)).astype(np.float64)
        del inv
        return cls._of(dims, routing, keys, ekeys // len(keys), ekeys % len(keys), ew, cap)

    @classmethod
    def of_entries(
        cls,
        dims: tuple[int, int, int],
        routing: str,
        rank: IntArray,
        pair_key: IntArray,
        w: FloatArray,
        cap: FloatArray,
    ) -> Torus:
        """From one entry per (rank, chip pair), by rank and then pair key (``of_pairs`` with
        the rows of an entry merged already)."""
        keys = np.unique(pair_key)
        pair = np.searchsorted(keys, pair_key).astype(np.int64)
        return cls._of(dims, routing, keys, rank, pair, w, cap)

    @classmethod
    def _of(
        cls,
        dims: tuple[int, int, int],
        routing: str,
        keys: IntArray,
        rank: IntArray,
        pair: IntArray,
        w: FloatArray,
        cap: FloatArray,
    ) -> Torus:
        chips = dims[0] * dims[1] * dims[2]
        ps = np.stack(np.unravel_index(keys // chips, dims), axis=1)
        pd = np.stack(np.unravel_index(keys % chips, dims), axis=1)
        return cls(
            dims,
            topology.runs(ps, pd, dims, routing),
            rank.astype(np.int64),
            pair.astype(np.int64),
            np.asarray(w, dtype=np.float64),
            cap,
            topology.flow_hops(ps, pd, dims) if len(ps) else np.zeros(0, dtype=np.int64),
        )

    @cached_property
    def incidence(self) -> tuple[IntArray, sp.csc_matrix] | None:
        """The distinct pairs' paths as a 0/1 matrix of the links some path crosses (their
        flat indices into (X, Y, Z, 6), ascending) x pairs, by pair, so that a load is one
        sparse product instead of a pass over the whole torus per axis and direction (the
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
        r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        crossed = np.bincount(r, minlength=self.dims[0] * self.dims[1] * self.dims[2] * 6) > 0
        used = np.nonzero(crossed)[0]
        m = sp.csc_matrix(
            (np.ones(len(r)), ((np.cumsum(crossed) - 1)[r], c)),
            shape=(len(used), self.runs.nflows),
            dtype=np.float64,
        )
        m.sum_duplicates()
        return used.astype(np.int64), m

    @cached_property
    def links(self) -> Links:
        """What a filling lays loads on (``lnetgen.throughput.fill``)."""
        inc = self.incidence
        cap = self.cap.reshape(-1)
        if inc is None:
            return Links(cap, None, self.runs, self.dims)
        return Links(cap[inc[0]], inc[1], None, self.dims)

    def _laid(self, per_pair: FloatArray) -> FloatArray:
        """Per link (X, Y, Z, 6), the sum of ``per_pair`` over the pairs crossing it."""
        inc = self.incidence
        if inc is None:
            return topology.runs_loads(self.runs, per_pair)
        out = np.zeros(self.dims[0] * self.dims[1] * self.dims[2] * 6)
        out[inc[0]] = inc[1] @ per_pair
        return out.reshape((*self.dims, 6))

    def path_counts(self) -> FloatArray:
        """Per link, how many (rank, router) paths cross it, whatever share each carries."""
        return self._laid(np.bincount(self.pair, minlength=self.runs.nflows).astype(np.float64))

    def loads(self, rate: FloatArray) -> FloatArray:
        """Per link, what ranks at ``rate`` put on it."""
        per_pair = np.bincount(
            self.pair, weights=self.w * rate[self.rank], minlength=self.runs.nflows
        ).astype(np.float64)
        return self._laid(per_pair)

    def ranks_on(self, links: FloatArray, nranks: int) -> BoolArray:
        """Per rank: whether one of its paths crosses a link where ``links`` > 0."""
        inc = self.incidence
        if inc is None:
            hit = topology.runs_sums(self.runs, links) > 0
        else:
            hit = np.asarray(inc[1].T @ links.reshape(-1)[inc[0]]).reshape(-1) > 0
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
    use: sp.csr_matrix | sp.csc_matrix
    cap: FloatArray
    torus: Torus | None = None

    @cached_property
    def by_rank(self) -> sp.csc_matrix:
        """``use`` by rank: the resources each rank crosses in order, for finding each rank's
        first full resource quickly (``use`` itself when it is by rank already)."""
        t = self.use if isinstance(self.use, sp.csc_matrix) else self.use.tocsc()
        t.sum_duplicates()
        return t

    @cached_property
    def layout(self) -> Layout:
        """The entries indexed for filling (``fill.Layout``)."""
        tor = self.torus
        if tor is None:
            empty = np.zeros(0, dtype=np.int64)
            return Layout.of(self.by_rank, empty, empty, np.zeros(0), 0, None)
        return Layout.of(self.by_rank, tor.rank, tor.pair, tor.w, tor.runs.nflows, tor.links)

    def restrict(self, ranks: IntArray) -> Problem:
        """The problem of ``ranks`` (ascending) only, renumbered in order: a filling of some
        of them gives them the same rates here."""
        keep = np.zeros(self.nranks, dtype=bool)
        keep[ranks] = True
        use = columns(self.by_rank, ranks)
        tor = self.torus
        if tor is not None:
            on = keep[tor.rank]
            sub = replace(
                tor, rank=(np.cumsum(keep) - 1)[tor.rank[on]], pair=tor.pair[on], w=tor.w[on]
            )
            for cached in ("incidence", "links"):  # of the paths, which are the same
                if cached in tor.__dict__:
                    sub.__dict__[cached] = tor.__dict__[cached]
            tor = sub
        return Problem(len(ranks), use, self.cap, tor)

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


def stack_rows(blocks: Sequence[sp.csc_matrix], n: int) -> sp.csc_matrix:
    """The matrices ``blocks`` (each rows x ``n``, canonical) one under the other, by column,
    without the coordinate lists a general stacking lays out (bounded memory)."""
    per_column = np.zeros(n, dtype=np.int64)
    for b in blocks:
        per_column += np.diff(b.indptr)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_column, out=indptr[1:])
    nnz = int(indptr[-1])
    data = np.empty(nnz)
    nrows = sum(b.shape[0] for b in blocks)
    indices = np.empty(nnz, dtype=np.int32 if nrows < 2**31 else np.int64)
    at = indptr[:-1].copy()  # where each column's next entries go
    base = 0
    for b in blocks:
        c = np.diff(b.indptr)
        dest = np.repeat(at - b.indptr[:-1], c) + np.arange(b.nnz, dtype=np.int64)
        data[dest] = b.data
        indices[dest] = b.indices + base
        at += c
        base += b.shape[0]
    out = sp.csc_matrix((data, indices, indptr), shape=(nrows, n))
    out.has_sorted_indices = True
    return out


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
    common pace until a resource or torus link it crosses is full (``fill.fill``)."""
    n = p.nranks
    live: BoolArray = np.ones(n, dtype=bool) if alive is None else alive.copy()
    tor = p.torus
    rate, frozen_by = fill(p.layout, p.cap, tor.links if tor is not None else None, live, weight)
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
    sub, ids = p, np.arange(n, dtype=np.int64)  # the ranks still alive, and some finished
    for _ in range(max_rounds):
        if not (alive & ~forever).any():
            return done_at
        if start is not None and alive.all():
            r = start.rate
        else:
            if len(ids) >= MIN_CUT and 2 * int(alive.sum()) <= len(ids):
                ids = np.nonzero(alive)[0]  # the finished ranks add nothing: left out
                sub = p.restrict(ids)
            w = None if weight is None else weight[ids]
            r = np.zeros(n)
            r[ids] = max_min(sub, alive[ids], w).rate
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
        r = np.zeros(n)
        r[ids] = max_min(sub, alive[ids], None if weight is None else weight[ids]).rate
        done_at[rest] = now + left[rest] / np.maximum(r[rest], 1e-300)
    return done_at
