"""Max-min fair sharing of capacities among ranks, and the time the slowest rank needs.

A *rank* streams one file (or its part of a shared file); its data leaves over one or more
*subflows* -- one per (OST, router) it uses, carrying the fraction ``w`` of the rank's rate
(LNet round-robins over the routers of one priority, a striped file spreads over its OSTs).
Each subflow crosses a few discrete *resources* (a router, an OSS, an OST, a leaf's uplinks...)
and, on a torus, the links of its dimension-order path.  A resource of capacity ``C`` carries
``sum(w * rate)`` over its subflows.

Rates are max-min fair (progressive filling): every unfrozen rank grows at the same pace until
some resource is full; the ranks through it are frozen at that rate; repeat.  This is the
fluid picture of fair arbitration at every resource; SeaStar's age-based arbitration is the
``age`` weighting in ``lnetgen.throughput.predict``.

IOR reports bytes moved / time of the slowest rank.  With equal files, ranks that finish free
their share for the rest: :func:`completion` replays that (re-sharing whenever ranks finish;
ranks due within ``batch`` of each other finish together, which moves the result by at most that
fraction) and returns the finishing time of every rank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnetgen import topology
from lnetgen.traffic.settings import BoolArray, FloatArray, IntArray

#: Two capacities within this fraction of full count as full (float noise of the sums).
FULL = 1e-9


@dataclass(frozen=True, eq=False)
class Torus:
    """The torus part of the subflows: chips (S, 3) of each subflow's ends (rows of -1 for a
    subflow that does not cross the torus) and each directed link's capacity (X, Y, Z, 6)."""

    dims: tuple[int, int, int]
    routing: str
    src: IntArray
    dst: IntArray
    cap: FloatArray


@dataclass(frozen=True, eq=False)
class Problem:
    """Ranks, their subflows and what the subflows cross.

    ``sub_rank[s]``: the rank subflow ``s`` belongs to; ``sub_w[s]``: its fraction of the
    rank's rate; ``sub_res[s, :]``: resource ids it crosses (-1 pads); ``cap[r]``: capacity of
    resource ``r`` (MB/s; ``inf`` where the rate is not known).
    """

    nranks: int
    sub_rank: IntArray
    sub_w: FloatArray
    sub_res: IntArray
    cap: FloatArray
    torus: Torus | None = None


@dataclass(frozen=True, eq=False)
class Shares:
    """The max-min fair rates (MB/s) and, for each rank, the resource that froze it: an id
    into ``cap``, ``-2`` for a torus link, ``-1`` for none (unbounded: no known rate limits
    it).  ``load``/``link_load`` are what the resources carry at these rates."""

    rate: FloatArray
    frozen_by: IntArray
    load: FloatArray
    link_load: FloatArray | None


def _spread(p: Problem, weights: FloatArray) -> tuple[FloatArray, FloatArray | None]:
    """What each resource (and torus link) carries when subflow ``s`` carries ``weights[s]``."""
    res = p.sub_res
    ok = res >= 0
    per = np.broadcast_to(weights[:, None], res.shape)
    load = np.bincount(res[ok], weights=per[ok], minlength=len(p.cap)).astype(np.float64)
    link: FloatArray | None = None
    if p.torus is not None:
        t = p.torus
        on = t.src[:, 0] >= 0
        link = np.zeros((*t.dims, 6))
        if on.any():
            link = topology.link_loads(
                t.src[on], t.dst[on], t.dims, t.routing, weights=weights[on]
            ).astype(np.float64)
    return load, link


def max_min(p: Problem, alive: BoolArray | None = None) -> Shares:
    """Max-min fair rates of the ranks in ``alive`` (all by default; the others get 0).  A
    rank no known capacity limits gets ``inf``."""
    n = p.nranks
    live: BoolArray = np.ones(n, dtype=bool) if alive is None else alive.copy()
    rate = np.zeros(n)
    frozen_by = np.full(n, -1, dtype=np.int64)
    load = np.zeros(len(p.cap))
    tor = p.torus
    link = np.zeros((*tor.dims, 6)) if tor is not None else np.zeros((1, 1, 1, 6))
    on_torus: BoolArray = (
        np.asarray(tor.src[:, 0] >= 0, dtype=bool) if tor is not None else np.zeros(0, dtype=bool)
    )
    nsub = len(p.sub_rank)
    active = live.copy()
    while active.any():
        grow = p.sub_w * active[p.sub_rank]
        d_load, d_link = _spread(p, grow)
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d_load > 0, (p.cap - load) / d_load, np.inf)
            step = float(room.min()) if len(room) else np.inf
            if tor is not None and d_link is not None:
                lroom = np.where(d_link > 0, (tor.cap - link) / d_link, np.inf)
                step = min(step, float(lroom.min()))
        if not np.isfinite(step):
            rate[active] = np.inf  # nothing known limits the rest
            break
        step = max(step, 0.0)
        rate[active] += step
        load += step * d_load
        full = (d_load > 0) & (load >= p.cap * (1 - FULL))
        hit_res = np.append(full, False)[p.sub_res]  # -1 pads index the appended False
        sub_hit: BoolArray = np.asarray(hit_res.any(axis=1), dtype=bool)
        first = np.where(sub_hit, p.sub_res[np.arange(nsub), hit_res.argmax(axis=1)], -1)
        if tor is not None and d_link is not None:
            link += step * d_link
            lfull = ((d_link > 0) & (link >= tor.cap * (1 - FULL))).astype(np.float64)
            crossed = np.zeros(nsub, dtype=bool)
            if on_torus.any() and lfull.any():
                sums = topology.path_sums(
                    tor.src[on_torus], tor.dst[on_torus], tor.dims, tor.routing, lfull
                )
                crossed[on_torus] = sums > 0
            first = np.where(~sub_hit & crossed, -2, first)
            sub_hit = sub_hit | crossed
        sub_hit = sub_hit & (grow > 0)
        stop = np.zeros(n, dtype=bool)
        stop[p.sub_rank[sub_hit]] = True
        stop &= active
        if not stop.any():  # float noise kept the tightest resource a hair short of full
            tight = int(np.argmin(room)) if len(room) else -1
            stop[p.sub_rank[(p.sub_res == tight).any(axis=1) & (grow > 0)]] = True
            stop &= active
            first = np.full(nsub, int(tight))
            if not stop.any():
                break
        # the resource that froze each rank: a full one on one of its subflows
        by = np.full(n, -1, dtype=np.int64)
        hit_idx = np.nonzero(sub_hit)[0][::-1]
        by[p.sub_rank[hit_idx]] = first[hit_idx]
        frozen_by[stop] = by[stop]
        active &= ~stop
    rate[~live] = 0.0
    finite = np.where(np.isfinite(rate), rate, 0.0)
    final_load, final_link = _spread(p, p.sub_w * finite[p.sub_rank])
    return Shares(rate, frozen_by, final_load, final_link)


def completion(p: Problem, batch: float = 0.01, max_rounds: int = 400) -> FloatArray:
    """When each rank finishes streaming one unit of data (MB: the times are in seconds per MB
    of each rank's file), re-sharing the capacities whenever ranks finish.

    Ranks due within ``batch`` (a fraction of the time to the next finish) finish in the same
    round; after ``max_rounds`` rounds the rest keep their last rates.  A rank with no known
    limit gets time 0 (nothing in the inventory bounds it).
    """
    n = p.nranks
    left = np.ones(n)
    done_at = np.zeros(n)
    alive = np.ones(n, dtype=bool)
    now = 0.0
    for _ in range(max_rounds):
        if not alive.any():
            return done_at
        sh = max_min(p, alive)
        r = sh.rate
        alive &= np.isfinite(r)  # no known limit: done at once
        if not alive.any():
            return done_at
        with np.errstate(divide="ignore"):
            due = np.where(alive & (r > 0), left / np.where(r > 0, r, 1.0), np.inf)
        dt = float(due.min())
        if not np.isfinite(dt):
            break
        finish = alive & (due <= dt * (1 + batch))
        now += dt
        left = np.where(alive, left - r * dt, left)
        done_at[finish] = now + np.maximum(left[finish], 0) / np.maximum(r[finish], 1e-300)
        left[finish] = 0.0
        alive &= ~finish
    if alive.any():
        sh = max_min(p, alive)
        done_at[alive] = now + left[alive] / np.maximum(sh.rate[alive], 1e-300)
    return done_at
