"""Placement: which clients should do the I/O for which OSS, and which OSTs a client should use.

Distances are torus hops (seed 000 §5, ``topology.torus_hops``; fabric hops on a fat-tree client
side) from a client to the routers *it* uses for a server's net in the plan: the mean over its
priority-0 gateways, since LNet spreads the client's traffic evenly over them.  So the same
client is near an OSS under projection (its paired router is close) and far under baseline
(every router counts).

* :func:`place_clients` -- seed 000 §5, greedy per OSS in the order given: the N free clients
  nearest to the OSS's routers, removed from the free set before the next OSS.
* :func:`place_osts` -- seed 004: the OSTs whose primary routers are fewest hops from a client,
  with ``lfs setstripe -c 1 -i <index>`` lines.
* :func:`compare_placements` -- torus link loads of placed clients against a default
  (contiguous, node order) and a random choice of the same number of clients for the same OSS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lnetgen import nodes, topology
from lnetgen.analyze import (
    FloatArray,
    IntArray,
    LinkStats,
    PlanIndex,
    Settings,
    Workload,
    best_gateways,
    client_shares,
    index_plan,
    input_error,
    torus_loads,
)
from lnetgen.model import Site
from lnetgen.plan import Plan


@dataclass(frozen=True)
class OssClients:
    """The clients chosen for one OSS."""

    server: str
    routers: tuple[str, ...]  # the OSS net's priority-0 routers
    clients: tuple[int, ...]  # indices into site.clients, in choice order
    nodes: str  # folded node set ('' for the default and random comparisons)
    mean_hops: float  # mean over the chosen clients of their hops to their gateways
    max_hops: float


@dataclass(frozen=True)
class ClientPlacement:
    method: str  # placed | default | random
    per_oss: tuple[OssClients, ...]

    @property
    def mean_hops(self) -> float:
        n = sum(len(o.clients) for o in self.per_oss)
        return sum(o.mean_hops * len(o.clients) for o in self.per_oss) / n if n else 0.0


def oss_with_osts(site: Site, plan: Plan) -> list[str]:
    """OSS names of the plan that have OSTs, in plan order."""
    osts = {s.name: s.osts for s in site.servers}
    return [s.name for s in plan.servers if s.role == "oss" and osts.get(s.name)]


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
    if site.torus is not None and ix.router_coords is not None:
        return np.asarray(
            topology.torus_hops(
                site.clients.coords[clients], ix.router_coords[routers], site.torus.dims
            ),
            dtype=np.float64,
        )
    leaves = site.clients.leaves
    if leaves:
        rl = []
        for r in routers.tolist():
            ca = site.router(ix.routers[r]).client_attach
            m = ca.module if ca is not None else None
            rl.append(leaves.index(m) if m in leaves else -2)
        return np.asarray(
            topology.fat_tree_hops(site.clients.leaf[clients][:, None], np.asarray(rl)[None, :]),
            dtype=np.float64,
        )
    raise input_error(
        "E-PLACE-TOPOLOGY",
        "placement needs a client topology (a torus or a fat tree) to measure distances",
    )


def _oss_ids(ix: PlanIndex, oss: Sequence[str]) -> list[int]:
    if not oss:
        raise input_error("E-USAGE", "name at least one OSS")
    if len(set(oss)) != len(oss):
        raise input_error("E-USAGE", "an OSS is named twice")
    ids = [ix.server_id(s) for s in oss]
    return ids


def _counts(ix: PlanIndex, ids: list[int], per_oss: int | None) -> list[int]:
    if per_oss is None:
        osts = {s.name: len(s.osts) for s in ix.site.servers}
        counts = [osts.get(ix.servers[i], 0) for i in ids]
        if not all(counts):
            raise input_error("E-USAGE", "give --per-oss: some OSS have no OSTs listed")
        return counts
    if per_oss < 1:
        raise input_error("E-USAGE", f"--per-oss must be at least 1, not {per_oss}")
    return [per_oss] * len(ids)


def _available(ix: PlanIndex, available: Sequence[int] | None) -> IntArray:
    n = len(ix.site.clients)
    if available is None:
        return np.arange(n, dtype=np.int64)
    arr = np.unique(np.asarray(available, dtype=np.int64))
    if len(arr) and (arr[0] < 0 or arr[-1] >= n):
        raise input_error("E-USAGE", "available client index out of range")
    return arr


def clients_by_name(site: Site, nodeset: str) -> list[int]:
    """Client indices of a node set; raises ``InputError`` naming clients the site lacks."""
    try:
        names = nodes.expand(nodeset)
    except nodes.NodeSyntaxError as exc:
        raise input_error("E-USAGE", f"{nodeset!r}: {exc}") from None
    index = {n: i for i, n in enumerate(site.clients.names)}
    missing = [n for n in names if n not in index]
    if missing:
        raise input_error("E-USAGE", f"not clients of {site.name}: {nodes.fold(missing)}")
    return sorted(index[n] for n in names)


def _result(
    ix: PlanIndex,
    method: str,
    ids: list[int],
    chosen: list[IntArray],
    hops: FloatArray,
    fold: bool = True,
) -> ClientPlacement:
    names = ix.site.clients.names
    out = []
    for sid, idx in zip(ids, chosen, strict=True):
        k = int(ix.server_net[sid])
        d = hops[idx, k]
        net = ix.plan.network(ix.nets[k])
        out.append(
            OssClients(
                ix.servers[sid],
                tuple(net.primary_routers),
                tuple(int(i) for i in idx),
                nodes.fold(names[i] for i in idx) if fold else "",
                round(float(d.mean()), 6) if len(d) else 0.0,
                round(float(d.max()), 6) if len(d) else 0.0,
            )
        )
    return ClientPlacement(method, tuple(out))


def place_clients(
    site: Site,
    plan: Plan,
    oss: Sequence[str],
    per_oss: int | None,
    available: Sequence[int] | None = None,
    index: PlanIndex | None = None,
) -> ClientPlacement:
    """Seed 000 §5, greedy: for each OSS in ``oss`` order, the ``per_oss`` free clients nearest
    to the routers they use for that OSS's net (ties: lower client index), then removed from the
    free set.  ``per_oss`` None means one client per OST of each OSS; ``available`` (client
    indices) restricts the free set.  Raises ``InputError`` for an unknown OSS, a client
    without a route to it, or too few free clients."""
    ix = index or index_plan(site, plan)
    ids = _oss_ids(ix, oss)
    counts = _counts(ix, ids, per_oss)
    hops = net_hops(ix)
    free = np.zeros(len(site.clients), dtype=bool)
    free[_available(ix, available)] = True
    chosen: list[IntArray] = []
    for sid, want in zip(ids, counts, strict=True):
        d = hops[:, int(ix.server_net[sid])]
        cand = np.nonzero(free & np.isfinite(d))[0]
        if len(cand) < want:
            raise input_error(
                "E-PLACE-FULL",
                f"{ix.servers[sid]}: {want} clients wanted but only "
                f"{len(cand)} free clients reach it",
            )
        order = np.lexsort((cand, d[cand]))[:want]
        pick = cand[order]
        free[pick] = False
        chosen.append(pick.astype(np.int64))
    return _result(ix, "placed", ids, chosen, hops)


def default_clients(
    site: Site,
    plan: Plan,
    oss: Sequence[str],
    per_oss: int | None,
    available: Sequence[int] | None = None,
    index: PlanIndex | None = None,
) -> ClientPlacement:
    """What a job launcher gives without placement: the first free clients in node order,
    dealt out to the OSS in order (OSS 1 gets the first ``per_oss``, and so on)."""
    ix = index or index_plan(site, plan)
    ids = _oss_ids(ix, oss)
    counts = _counts(ix, ids, per_oss)
    pool = _available(ix, available)
    return _dealt(ix, "default", ids, counts, pool)


def random_clients(
    site: Site,
    plan: Plan,
    oss: Sequence[str],
    per_oss: int | None,
    seed: int = 0,
    available: Sequence[int] | None = None,
    index: PlanIndex | None = None,
) -> ClientPlacement:
    """Free clients in a random order (numpy generator seeded with ``seed``), dealt out as in
    :func:`default_clients`."""
    ix = index or index_plan(site, plan)
    ids = _oss_ids(ix, oss)
    counts = _counts(ix, ids, per_oss)
    pool = _available(ix, available)
    pool = np.random.default_rng(seed).permutation(pool)
    return _dealt(ix, "random", ids, counts, pool)


def _dealt(
    ix: PlanIndex, method: str, ids: list[int], counts: list[int], pool: IntArray
) -> ClientPlacement:
    if sum(counts) > len(pool):
        raise input_error("E-PLACE-FULL", f"{sum(counts)} clients wanted but only {len(pool)} free")
    hops = net_hops(ix)
    bounds = np.cumsum([0, *counts])
    chosen = [np.asarray(pool[bounds[i] : bounds[i + 1]], dtype=np.int64) for i in range(len(ids))]
    return _result(ix, method, ids, chosen, hops, fold=False)


def workload(site: Site, placement: ClientPlacement) -> Workload:
    """The placed clients as a workload: each client writes one file on one OST of its OSS, so
    it carries one flow, or the OSS's OST count shared out when it has more clients than OSTs."""
    osts = {s.name: len(s.osts) for s in site.servers}
    clients: list[int] = []
    servers: list[str] = []
    flows: list[float] = []
    for o in placement.per_oss:
        n = len(o.clients)
        per = min(1.0, osts.get(o.server, 0) / n) if n and osts.get(o.server) else 1.0
        clients.extend(o.clients)
        servers.extend([o.server] * n)
        flows.extend([per] * n)
    return Workload(
        placement.method,
        np.asarray(clients, dtype=np.int64),
        tuple(servers),
        np.asarray(flows, dtype=np.float64),
    )


@dataclass(frozen=True)
class PlacementLoads:
    method: str
    mean_hops: float
    writes: LinkStats
    reads: LinkStats


@dataclass(frozen=True)
class PlacementComparison:
    placed: PlacementLoads
    default: PlacementLoads
    random: PlacementLoads


def placement_loads(
    site: Site, placement: ClientPlacement, index: PlanIndex, settings: Settings | None = None
) -> PlacementLoads:
    """Torus link loads of a placement's workload.  Raises ``InputError`` without a torus."""
    rep = torus_loads(index, workload(site, placement), settings)
    if rep is None:
        raise input_error("E-PLACE-TOPOLOGY", "link loads need a torus client side")
    return PlacementLoads(placement.method, round(placement.mean_hops, 6), rep.writes, rep.reads)


def compare_placements(
    site: Site,
    plan: Plan,
    oss: Sequence[str],
    per_oss: int | None,
    settings: Settings | None = None,
    seed: int = 0,
    available: Sequence[int] | None = None,
    index: PlanIndex | None = None,
) -> PlacementComparison:
    """Placed vs default vs random clients for the same OSS and counts."""
    ix = index or index_plan(site, plan, settings)
    placed = place_clients(site, plan, oss, per_oss, available, ix)
    default = default_clients(site, plan, oss, per_oss, available, ix)
    rnd = random_clients(site, plan, oss, per_oss, seed, available, ix)
    return PlacementComparison(
        *(placement_loads(site, p, ix, settings) for p in (placed, default, rnd))
    )


@dataclass(frozen=True)
class OstChoice:
    fs: str
    index: int
    server: str
    hops: float  # mean hops from the client to its gateways for the OST's server
    routers: tuple[str, ...]  # the client's gateways for that server's net

    def setstripe(self, path: str = "FILE") -> str:
        return f"lfs setstripe -c 1 -i {self.index} {path}"


def place_osts(
    site: Site,
    plan: Plan,
    client: str,
    count: int = 1,
    fs: str | None = None,
    index: PlanIndex | None = None,
) -> list[OstChoice]:
    """Seed 004: the ``count`` OSTs (of file system ``fs``, or of all) whose OSS the client
    reaches through the fewest torus hops to its own gateways.  Ties go to the OST that is
    earliest on its OSS (so equal-distance picks spread over servers), then file system, OSS
    name and index.  Raises ``InputError`` for an unknown client or file system."""
    ix = index or index_plan(site, plan)
    if count < 1:
        raise input_error("E-USAGE", f"--count must be at least 1, not {count}")
    try:
        ci = site.clients.names.index(client)
    except ValueError:
        raise input_error("E-USAGE", f"{client!r} is not a client of {site.name}") from None
    if fs is not None and fs not in {f.name for f in site.filesystems}:
        raise input_error(
            "E-USAGE",
            f"no file system {fs!r} (known: {', '.join(f.name for f in site.filesystems)})",
        )
    hops = net_hops(ix)[ci]
    cls = int(ix.client_class[ci])
    by_name = {s.name: s for s in site.servers}
    cands: list[tuple[float, int, str, str, int, tuple[str, ...]]] = []
    for sid, name in enumerate(ix.servers):
        srv = by_name[name]
        if srv.role != "oss" or (fs is not None and srv.fs != fs):
            continue
        k = int(ix.server_net[sid])
        d = float(hops[k])
        if not np.isfinite(d):
            continue
        gws = best_gateways(ix, cls, k)
        for rank, ost in enumerate(srv.osts):
            cands.append((round(d, 6), rank, srv.fs, name, ost, gws))
    cands.sort(key=lambda c: (c[0], c[1], c[2], c[3], c[4]))
    return [OstChoice(c[2], c[4], c[3], c[0], c[5]) for c in cands[:count]]


__all__ = [
    "ClientPlacement",
    "OssClients",
    "OstChoice",
    "PlacementComparison",
    "PlacementLoads",
    "clients_by_name",
    "compare_placements",
    "default_clients",
    "net_hops",
    "oss_with_osts",
    "place_clients",
    "place_osts",
    "placement_loads",
    "random_clients",
    "workload",
]
