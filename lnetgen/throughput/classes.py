"""Ranks with the same path, modelled once: a *class* of ranks on one node writing (reading)
the same OSTs at the same shares, on the same side of a job's ranks and other jobs' streams.

Max-min fair sharing gives ranks that cross the same resources and torus links the same rate,
and their files finish together; so a class is one column of the problem whose entries carry
its ranks' count (``merged``), and its rate is each of its ranks' rate.  A thousand ranks on a
node and a thousand OSTs make up to that many times fewer columns (IOR's ``-N`` ranks per
node over fewer OSTs, or the ranks of a shared file on one node).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnetgen.throughput.workload import Ranks
from lnetgen.traffic.settings import IntArray


@dataclass(frozen=True, eq=False)
class Classes:
    """``of[k]``: the class of rank ``k``; ``count``: each class's ranks; ``first``: its
    first rank.  Classes are numbered in the order of their first ranks."""

    of: IntArray
    count: IntArray
    first: IntArray


def rank_classes(ranks: Ranks, njob: int) -> Classes | None:
    """The classes of ``ranks`` (the first ``njob`` are the job's); None when every rank is a
    class of its own."""
    n = len(ranks.node)
    per = np.bincount(ranks.pair_rank, minlength=n)
    order = np.lexsort((ranks.pair_w, ranks.pair_ost, ranks.pair_rank))
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per, out=start[1:])
    ost = ranks.pair_ost[order]
    shares, wid = np.unique(ranks.pair_w[order], return_inverse=True)
    del order
    group = np.empty(n, dtype=np.int64)  # per rank: its class's first rank
    nodes = int(ranks.node.max()) + 1 if n else 1
    for c in np.unique(per).tolist():
        who = np.nonzero(per == c)[0]
        at = start[who]
        cols = [(np.asarray(who < njob, dtype=np.int64), 2), (ranks.node[who], nodes)]
        for i in range(c):
            cols += [(ost[at + i], len(ranks.ost_label)), (wid.reshape(-1)[at + i], len(shares))]
        first = _first_of_equal(cols)
        group[who] = who[first]
    first_rank, of = np.unique(group, return_inverse=True)
    if len(first_rank) == n:
        return None
    of = of.reshape(-1).astype(np.int64)
    return Classes(of, np.bincount(of), first_rank)


def _first_of_equal(cols: list[tuple[IntArray, int]]) -> IntArray:
    """Per row of the columns (each with values below its bound): the first row equal to it
    in every column.  The columns are packed into one integer key while it fits, and sorted
    together beyond (a wide stripe)."""
    keys: list[IntArray] = []
    key, room = np.zeros(len(cols[0][0]), dtype=np.int64), 1
    for values, bound in cols:
        if room * max(bound, 1) >= 2**62:
            keys.append(key)
            key, room = np.zeros(len(values), dtype=np.int64), 1
        key = key * max(bound, 1) + values
        room *= max(bound, 1)
    keys.append(key)
    if len(keys) == 1:
        _, lead, label = np.unique(keys[0], return_index=True, return_inverse=True)
        return np.asarray(lead[label.reshape(-1)], dtype=np.int64)
    sort = np.lexsort(keys[::-1])  # stable: equal rows in row order
    new = np.zeros(len(sort), dtype=bool)
    new[:1] = True
    for k in keys:
        ks = k[sort]
        new[1:] |= ks[1:] != ks[:-1]
    out = np.empty(len(sort), dtype=np.int64)
    out[sort] = sort[np.nonzero(new)[0]][np.cumsum(new) - 1]
    return out


def merged(ranks: Ranks, cl: Classes) -> Ranks:
    """The classes as ranks: each its first rank's node and OSTs, the shares times its count."""
    mine = cl.of[ranks.pair_rank]
    keep = ranks.pair_rank == cl.first[mine]
    return Ranks(
        ranks.spec,
        ranks.node[cl.first],
        mine[keep],
        ranks.pair_ost[keep],
        ranks.pair_w[keep] * cl.count[mine[keep]],
        ranks.ost_server,
        ranks.ost_label,
    )


__all__ = ["Classes", "merged", "rank_classes"]
