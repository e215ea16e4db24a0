"""Exact balanced assignment of clients to routers: the min-cost transportation problem.

:func:`assign` gives each of N clients one of R routers so that no router takes more clients
than its capacity and the total cost is minimal.  It is written for many clients and few
routers (the nearest-neighbor strategy: per leaf module, ~18,700 clients and 6 routers).

Method: successive shortest paths on the R routers.
1. Every client starts on its cheapest router (lowest index on a tie).  Ignoring capacities
   this is optimal, and it stays optimal for whatever loads the routers carry ("no negative
   cycle") through every step below.
2. While a router is over capacity, move clients along a cheapest chain of moves from an
   over-full router to one with room: router j -> k costs the least ``cost[i, k] - cost[i, j]``
   over the clients i now on j (these edges can be negative once clients have moved; the
   shortest path is found by Bellman-Ford over the R routers).  All clients whose move costs
   exactly that least amount can go at once, as parallel copies of the same shortest path, so
   one step usually moves hundreds of clients, not one.
3. At the end the solution is checked: loads within capacity, and no negative cycle in the
   residual graph (routers plus the sink), which is the optimality certificate of a min-cost
   flow.  A failed check raises ``RuntimeError`` (a bug, never a user mistake).

Deterministic: numpy only, no hashing or sets; ties go to the lowest router index and the
lowest client indices.  Cost per step is O(N * R); the number of steps is at most the total
initial overload and, for hop-count costs (small integers shared by many clients), small.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]

#: "No edge" / "unreachable" in the router graph; far above any path cost we accept.
_INF = np.int64(2**62)
#: Largest absolute cost accepted, so that path sums over R routers cannot reach ``_INF``.
MAX_ABS_COST = 2**40


def _validate(cost: Any, capacity: Any) -> tuple[IntArray, IntArray]:
    c = np.asarray(cost)
    cap = np.asarray(capacity)
    if c.ndim != 2:
        raise ValueError(f"cost must be a 2-D (clients x routers) array, got shape {c.shape}")
    if cap.ndim != 1 or cap.shape[0] != c.shape[1]:
        raise ValueError(
            f"capacity must have shape ({c.shape[1]},) to match cost {c.shape}, got {cap.shape}"
        )
    for name, arr in (("cost", c), ("capacity", cap)):
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must be an integer array, got dtype {arr.dtype}")
    c = c.astype(np.int64, copy=False)
    cap = cap.astype(np.int64, copy=False)
    if cap.size and int(cap.min()) < 0:
        raise ValueError(f"capacity must not be negative, got {cap.tolist()}")
    if c.size and int(np.abs(c).max()) > MAX_ABS_COST:
        raise ValueError(f"costs must lie within +/-{MAX_ABS_COST}")
    return c, cap


def assign(cost: Any, capacity: Any) -> IntArray:
    """For each client (row of ``cost``), the index of its router (column), minimizing the total
    ``sum(cost[i, result[i]])`` subject to ``bincount(result) <= capacity``.

    ``cost`` is an (N, R) integer array, ``capacity`` an (R,) array of non-negative integers.
    Returns an (N,) int64 array.  Among optimal answers the one returned depends only on the
    input values.  Raises ``ValueError`` for bad shapes or types, and when the routers cannot
    hold all clients (``capacity.sum() < N``).
    """
    c, cap = _validate(cost, capacity)
    nclients, nrouters = c.shape
    if nclients == 0:
        return np.zeros(0, dtype=np.int64)
    total = int(cap.sum())
    if total < nclients:
        raise ValueError(
            f"infeasible: {nclients} clients but the {nrouters} routers can take "
            f"only {total} in all (capacities {cap.tolist()})"
        )
    usable = np.nonzero(cap > 0)[0]
    sub = _solve(c[:, usable], cap[usable])
    return usable[sub].astype(np.int64)


def _edge_row(choice: IntArray, delta: IntArray, j: int) -> IntArray:
    """Cheapest move from router j to every router over the clients on j (``_INF`` if none)."""
    on = choice == j
    if not on.any():
        return np.full(delta.shape[1], _INF, dtype=np.int64)
    return np.asarray(delta[on].min(axis=0), dtype=np.int64)


def _shortest(weights: IntArray, dist: IntArray) -> tuple[IntArray, IntArray]:
    """Bellman-Ford from the nodes with finite ``dist``; returns (dist, predecessor or -1)."""
    n = len(dist)
    pred = np.full(n, -1, dtype=np.int64)
    cols = np.arange(n)
    finite_w = weights < _INF
    for _ in range(n):
        ok = (dist[:, None] < _INF) & finite_w
        cand = np.where(ok, dist[:, None] + weights, _INF)
        best_from = cand.argmin(axis=0)
        best = cand[best_from, cols]
        better = best < dist
        if not better.any():
            return dist, pred
        dist = np.where(better, best, dist)
        pred = np.where(better, best_from, pred)
    raise RuntimeError("transport: negative cycle in the router graph (not optimal)")


def _solve(c: IntArray, cap: IntArray) -> IntArray:
    nclients, nrouters = c.shape
    rows = np.arange(nclients)
    choice: IntArray = c.argmin(axis=1).astype(np.int64)
    # delta[i, k]: what moving client i from its router to router k would cost
    delta = c - c[rows, choice][:, None]
    excess = np.bincount(choice, minlength=nrouters).astype(np.int64) - cap
    weights = np.stack([_edge_row(choice, delta, j) for j in range(nrouters)])
    while (excess > 0).any():
        dist0 = np.where(excess > 0, 0, _INF).astype(np.int64)
        dist, pred = _shortest(weights, dist0)
        room = np.where(excess < 0, dist, _INF)
        sink = int(room.argmin())
        if room[sink] >= _INF:  # cannot happen while total capacity >= clients
            raise RuntimeError("transport: no router with room is reachable")
        path = [sink]
        while pred[path[-1]] >= 0:
            path.append(int(pred[path[-1]]))
            if len(path) > nrouters:
                raise RuntimeError("transport: predecessor cycle")
        path.reverse()
        amount = int(min(excess[path[0]], -excess[sink]))
        movers: list[IntArray] = []
        for j, k in pairwise(path):
            idx = np.nonzero((choice == j) & (delta[:, k] == weights[j, k]))[0]
            amount = min(amount, len(idx))
            movers.append(idx)
        if amount < 1:
            raise RuntimeError("transport: empty augmentation")
        for (_, k), idx in zip(pairwise(path), movers, strict=True):
            moved = idx[:amount]
            choice[moved] = k
            delta[moved] = c[moved] - c[moved, k][:, None]
        excess[path[0]] -= amount
        excess[sink] += amount
        for j in path:
            weights[j] = _edge_row(choice, delta, j)
    _certify(choice, delta, cap, weights)
    return choice


def _certify(choice: IntArray, delta: IntArray, cap: IntArray, weights: IntArray) -> None:
    """Raise ``RuntimeError`` unless ``choice`` is feasible and of minimal cost."""
    nrouters = len(cap)
    load = np.bincount(choice, minlength=nrouters)
    if (load > cap).any():
        raise RuntimeError(f"transport: loads {load.tolist()} exceed capacities {cap.tolist()}")
    if not np.array_equal(
        weights, np.stack([_edge_row(choice, delta, j) for j in range(nrouters)])
    ):
        raise RuntimeError("transport: stale router graph")
    # residual graph: routers 0..R-1 plus the sink R; router -> sink while it has room,
    # sink -> router while it serves someone, both at cost 0
    full = np.full((nrouters + 1, nrouters + 1), _INF, dtype=np.int64)
    full[:nrouters, :nrouters] = weights
    np.fill_diagonal(full, _INF)
    full[:nrouters, nrouters] = np.where(load < cap, 0, _INF)
    full[nrouters, :nrouters] = np.where(load > 0, 0, _INF)
    try:
        _shortest(full, np.zeros(nrouters + 1, dtype=np.int64))
    except RuntimeError:
        raise RuntimeError("transport: assignment is not of minimal cost") from None
