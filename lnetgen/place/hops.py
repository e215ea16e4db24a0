"""Distances for placement: from each client to the routers *it* uses for each storage net.

Distances are torus hops (seed 000 §5, ``topology.torus_hops``; link counts on a fat-tree or
dragonfly client side, ``lnetgen.distance``) from a client to the routers it uses for a server's net
in the plan: the mean over its priority-0 gateways, since LNet spreads the client's traffic evenly
over them. So the same client is near an OSS under projection (its paired router is close) and far
under baseline (every router counts).
"""

from __future__ import annotations

import numpy as np

from lnetgen.distance import client_router_hops, has_distances
from lnetgen.traffic import FloatArray, IntArray, PlanIndex, client_shares, input_error


def net_hops(ix: PlanIndex) -> FloatArray:
    """(clients, storage nets): mean hops from each client to its priority-0 gateways for each
    net (``inf`` where the client has no gateway).  Raises ``InputError`` without a client
    topology.  Computed once per index."""
    cached = ix.memo.get("net_hops")
    if cached is not None:
        return np.asarray(cached)
    out = _net_hops(ix)
    ix.memo["net_hops"] = out
    return out


def _net_hops(ix: PlanIndex) -> FloatArray:
    n, nnet = len(ix.site.clients), len(ix.nets)
    out = np.full(n * nnet, np.inf)
    sh = client_shares(ix)
    if not len(sh.key) or not n:
        return out.reshape(n, nnet)
    used = np.unique(sh.router)
    col = np.full(len(ix.routers), -1, dtype=np.int64)
    col[used] = np.arange(len(used))
    clients = np.nonzero(ix.client_class >= 0)[0].astype(np.int64)
    cls = ix.client_class[clients]
    lo_key, hi_key = cls * nnet, (cls + 1) * nnet
    rows_per = sh.first[hi_key] - sh.first[lo_key]
    # chunks of clients whose expanded rows and hop tables stay around a million entries
    step = max(1, _CHUNK // max(int(rows_per.max(initial=1)), len(used), 1))
    for i in range(0, len(clients), step):
        part = slice(i, i + step)
        owner, row = sh.rows_in(lo_key[part], hi_key[part])
        hops = _client_router_hops(ix, clients[part], used)  # (chunk, routers used)
        key = clients[part][owner] * nnet + sh.key[row] % nnet
        w = sh.share[row]
        dist = np.bincount(key, weights=w * hops[owner, col[sh.router[row]]], minlength=n * nnet)
        total = np.bincount(key, weights=w, minlength=n * nnet)
        hit = total > 0
        out[hit] = dist[hit] / total[hit]
    # means of many routers differ in the last bits with the summation order; rounding keeps
    # equal distances equal, so ties go to the lower client index as documented
    return np.round(out, 9).reshape(n, nnet)


#: Client rows (or client x router hop entries) handled at once by :func:`net_hops`.
_CHUNK = 1_000_000


def _client_router_hops(ix: PlanIndex, clients: IntArray, routers: IntArray) -> FloatArray:
    site = ix.site
    if not has_distances(site) or (site.torus is not None and ix.router_coords is None):
        raise input_error(
            "E-PLACE-TOPOLOGY",
            "placement needs a client topology (a torus, a fat tree or a dragonfly) to measure "
            "distances",
        )
    if site.torus is not None and ix.router_coords is not None:  # the plan's positions
        return client_router_hops(site, clients, (), ix.router_coords[routers]).astype(np.float64)
    rs = [site.router(ix.routers[r]) for r in routers.tolist()]
    return client_router_hops(site, clients, rs).astype(np.float64)
