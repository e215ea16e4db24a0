"""Progressive filling (``lnetgen.throughput.share``) by events: what the growing ranks add to
each resource and torus link is laid out once, and each round takes away what the ranks it
freezes added, instead of laying it out again over every growing rank.

A round finds the ranks to freeze from the entries of the resources and links just filled (by
resource, by link: few), not from every rank's; a rank's rate is the level reached when it
freezes (times its weight).  So a filling costs one pass over the problem and a pass over the
resources and links per round, whatever the number of growing ranks.

Taking sums away can leave float rounding where laying them out afresh would not: a resource
or link that no growing rank crosses any more (counted exactly) adds nothing, and otherwise
the rates agree with laying every round out afresh to within float rounding (to the last bit
on the shipped sites' workloads that were compared).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from lnetgen import topology
from lnetgen.traffic.settings import BoolArray, FloatArray, IntArray

#: Two capacities within this fraction of full count as full (float noise of the sums).
FULL = 1e-9
#: Indices kept as 4-byte integers where they fit (bounded memory).
Index = npt.NDArray[np.signedinteger[Any]]
#: Below this many ranks a problem is not cut down to the ranks still alive (``completion``).
MIN_CUT = 2048


@dataclass(frozen=True, eq=False)
class Links:
    """The torus links a filling lays loads on: with ``inc`` (the chip pairs' paths as a
    link x pair matrix, compressed by pair) only the ``cap.size`` links some path crosses;
    without it every link, from ``runs``."""

    cap: FloatArray  # flat, per link laid out
    inc: sp.csc_matrix | None
    runs: topology.Runs | None
    dims: tuple[int, int, int]


@dataclass(frozen=True, eq=False)
class Layout:
    """A problem's entries, indexed both ways, for filling it again and again: ``use`` by rank
    (resources x ranks) and by resource (``res_ptr``/``res_rank``); the torus entries (``t_*``,
    in their order) by rank and by pair (``*_order``/``*_ptr``) and the pairs crossing each
    link (``link_ptr``/``link_pair``, with an incidence)."""

    use: sp.csc_matrix
    res_ptr: Index
    res_rank: Index
    t_rank: IntArray
    t_pair: IntArray
    t_w: FloatArray
    rank_order: Index
    rank_ptr: IntArray
    pair_order: Index
    pair_ptr: IntArray
    npairs: int
    link_ptr: Index | None
    link_pair: Index | None

    @classmethod
    def of(
        cls,
        use: sp.csc_matrix,
        t_rank: IntArray,
        t_pair: IntArray,
        t_w: FloatArray,
        npairs: int,
        links: Links | None,
    ) -> Layout:
        n = use.shape[1]
        by_res = use.tocsr()  # scipy's own index type: 4 bytes an entry below 2**31
        rank_order: Index = np.argsort(t_rank, kind="stable")
        pair_order: Index = np.argsort(t_pair, kind="stable")
        if len(t_rank) < 2**31:
            rank_order, pair_order = rank_order.astype(np.int32), pair_order.astype(np.int32)
        by_link = links.inc.tocsr() if links is not None and links.inc is not None else None
        return cls(
            use,
            by_res.indptr,
            by_res.indices,
            t_rank,
            t_pair,
            t_w,
            rank_order,
            np.searchsorted(t_rank[rank_order], np.arange(n + 1)),
            pair_order,
            np.searchsorted(t_pair[pair_order], np.arange(npairs + 1)),
            npairs,
            None if by_link is None else by_link.indptr,
            None if by_link is None else by_link.indices,
        )


def columns(m: sp.csc_matrix, cols: IntArray) -> sp.csc_matrix:
    """The columns ``cols`` (ascending) of ``m``, each with its entries in the same order."""
    at, indptr = _ranges(m.indptr, cols)
    out = sp.csc_matrix((m.data[at], m.indices[at], indptr), shape=(m.shape[0], len(cols)))
    out.has_sorted_indices = m.has_sorted_indices
    return out


def _ranges(ptr: Index, which: Index) -> tuple[IntArray, IntArray]:
    """The positions ``ptr[i] .. ptr[i+1]-1`` of every ``i`` in ``which``, in order, and where
    each ``i``'s start in them."""
    start = ptr[which]
    length = ptr[which + 1] - start
    offset = np.zeros(len(which) + 1, dtype=np.int64)
    np.cumsum(length, out=offset[1:])
    at = np.repeat(start - offset[:-1], length) + np.arange(int(offset[-1]), dtype=np.int64)
    return at, offset


def fill(
    lay: Layout,
    cap: FloatArray,
    links: Links | None,
    live: BoolArray,
    weight: FloatArray | None,
) -> tuple[FloatArray, IntArray]:
    """The rates and freezing resources of the ``live`` ranks (the others: 0 and -1): see
    ``share._fill``."""
    n = len(live)
    g = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
    grow = np.asarray(live * g, dtype=np.float64)
    d_load = np.asarray(lay.use @ grow).reshape(-1)
    crossing = np.repeat(live, np.diff(lay.use.indptr)) & (lay.use.data > 0)
    count = np.bincount(lay.use.indices, weights=crossing, minlength=len(cap))
    torus = _TorusPart(lay, links, live, grow) if links is not None else None
    rate = np.zeros(n)
    frozen_by = np.full(n, -1, dtype=np.int64)
    load = np.zeros(len(cap))
    active = live.copy()
    left = int(live.sum())  # ranks still growing
    level = 0.0
    while left:
        dl = np.where(count > 0, d_load, 0.0)  # no rank left: no residue of the subtractions
        dk = torus.rising() if torus is not None else None
        lroom = None
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(dl > 0, (cap - load) / dl, np.inf)
            step = float(room.min()) if len(room) else np.inf
            if torus is not None and dk is not None:
                lroom = np.where(dk > 0, (torus.cap - torus.link) / dk, np.inf)
                if len(lroom):
                    step = min(step, float(lroom.min()))
        # the constraint(s) that set the step are full, whatever float noise says
        tight = step + 1e-12 * abs(step)
        if not np.isfinite(step):
            rate[active] = np.inf  # nothing known limits the rest
            return rate, frozen_by
        step = max(step, 0.0)
        level += step
        load += step * dl
        full = (dl > 0) & (load >= cap * (1 - FULL))
        full |= room <= tight
        stop, first = _on_full(lay, np.nonzero(full)[0], active)
        if torus is not None and dk is not None and lroom is not None:
            lfull = torus.advance(step, dk, lroom, tight)
            if lfull.any():
                on = torus.ranks_on(lfull, active)
                on = on[~np.isin(on, stop)]
                stop = np.concatenate([stop, on])
                first = np.concatenate([first, np.full(len(on), -2, dtype=np.int64)])
        if not len(stop):
            break
        rate[stop] = level * g[stop]
        frozen_by[stop] = first
        active[stop] = False
        left -= len(stop)
        stop = np.sort(stop)
        at, offset = _ranges(lay.use.indptr, stop)
        rows, data = lay.use.indices[at], lay.use.data[at]
        owner = np.repeat(g[stop], np.diff(offset))
        d_load -= np.bincount(rows, weights=data * owner, minlength=len(cap))
        count -= np.bincount(rows, weights=data > 0, minlength=len(cap))
        if torus is not None:
            torus.remove(stop, g)
    rate[active] = level * g[active]
    return rate, frozen_by


def _distinct(values: Index, size: int) -> IntArray:
    """The distinct ``values`` (below ``size``), ascending: marked in a mask when there are
    many, sorted when few."""
    if 16 * len(values) > size:
        mask = np.zeros(size, dtype=bool)
        mask[values] = True
        return np.flatnonzero(mask)
    return np.unique(values).astype(np.int64)


def _on_full(lay: Layout, rows: IntArray, active: BoolArray) -> tuple[IntArray, IntArray]:
    """The active ranks crossing resources ``rows`` (ascending), each with the first of them
    it crosses."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    at, offset = _ranges(lay.res_ptr, rows)
    rank = lay.res_rank[at]
    row = np.repeat(rows, np.diff(offset))
    keep = active[rank]
    rank, row = rank[keep], row[keep]
    ranks, lead = np.unique(rank, return_index=True)  # the first entry: the lowest row
    return ranks, row[lead]


class _TorusPart:
    """The torus side of a filling: what the growing ranks add per link (``d_link``), the
    links' loads, and how many growing pairs cross each link (exact)."""

    def __init__(self, lay: Layout, links: Links, live: BoolArray, grow: FloatArray) -> None:
        self.lay, self.links = lay, links
        self.cap = links.cap
        per_pair = np.bincount(
            lay.t_pair, weights=lay.t_w * grow[lay.t_rank], minlength=lay.npairs
        ).astype(np.float64)
        self.pair_count = np.bincount(
            lay.t_pair, weights=live[lay.t_rank], minlength=lay.npairs
        ).astype(np.float64)
        self.d_link = self._laid(per_pair)
        self.link_count = self._laid((self.pair_count > 0).astype(np.float64))
        self.link = np.zeros(self.cap.shape)

    def _laid(self, per_pair: FloatArray) -> FloatArray:
        if self.links.inc is not None:
            return np.asarray(self.links.inc @ per_pair, dtype=np.float64)
        assert self.links.runs is not None
        return topology.runs_loads(self.links.runs, per_pair).reshape(-1)

    def rising(self) -> FloatArray:
        d = np.where(self.link_count > 0.5, self.d_link, 0.0)
        if d.size:
            # the difference-array layout leaves ~1e-16 residues on idle links: not load
            d = np.where(d > 1e-12 * float(d.max()), d, 0.0)
        return d

    def advance(self, step: float, dk: FloatArray, lroom: FloatArray, tight: float) -> BoolArray:
        """Add a round's load; the links it fills."""
        self.link += step * dk
        lfull = (dk > 0) & (self.link >= self.cap * (1 - FULL))
        lfull |= lroom <= tight
        return np.asarray(lfull, dtype=bool)

    def ranks_on(self, lfull: BoolArray, active: BoolArray) -> IntArray:
        """The active ranks with a path over a link where ``lfull`` holds (the work is the
        entries of those links and pairs, not every pair's or rank's)."""
        lay = self.lay
        if lay.link_ptr is not None and lay.link_pair is not None:
            at, _ = _ranges(lay.link_ptr, np.nonzero(lfull)[0])
            pairs = _distinct(lay.link_pair[at], lay.npairs)
        else:
            assert self.links.runs is not None
            mask = lfull.astype(np.float64).reshape((*self.links.dims, 6))
            pairs = np.nonzero(topology.runs_sums(self.links.runs, mask) > 0)[0]
        pairs = pairs[self.pair_count[pairs] > 0.5]
        at, _ = _ranges(lay.pair_ptr, pairs)
        rank = lay.t_rank[lay.pair_order[at]]
        return _distinct(rank[active[rank]], len(active))

    def remove(self, stop: IntArray, g: FloatArray) -> None:
        """Take away what the ranks ``stop`` added."""
        lay = self.lay
        at, _ = _ranges(lay.rank_ptr, stop)
        e = lay.rank_order[at]
        if not len(e):
            return
        pair, w = lay.t_pair[e], lay.t_w[e] * g[lay.t_rank[e]]
        if 16 * len(e) > lay.npairs:  # a pass over every pair costs less than sorting these
            gone = np.bincount(pair, minlength=lay.npairs)
            changed = np.nonzero(gone)[0]
            delta = np.bincount(pair, weights=w, minlength=lay.npairs)[changed]
            self.pair_count[changed] -= gone[changed]
        else:
            changed, inv = np.unique(pair, return_inverse=True)
            inv = inv.reshape(-1)
            delta = np.bincount(inv, weights=w, minlength=len(changed))
            self.pair_count[changed] -= np.bincount(inv, minlength=len(changed))
        dead = (self.pair_count[changed] < 0.5).astype(np.float64)
        inc = self.links.inc
        if inc is not None:
            at, offset = _ranges(inc.indptr, changed)
            rows, data, per = inc.indices[at], inc.data[at], np.diff(offset)
            nlinks = len(self.cap)
            self.d_link -= np.bincount(rows, weights=data * np.repeat(delta, per), minlength=nlinks)
            self.link_count -= np.bincount(
                rows, weights=data * np.repeat(dead, per), minlength=nlinks
            )
        else:
            full_delta = np.zeros(lay.npairs)
            full_delta[changed] = delta
            full_dead = np.zeros(lay.npairs)
            full_dead[changed] = dead
            self.d_link -= self._laid(full_delta)
            self.link_count -= self._laid(full_dead)
