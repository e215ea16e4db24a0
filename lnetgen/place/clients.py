"""Which clients should do the I/O for which OSS: the nearest free clients per OSS (seed 000
§5, greedy per OSS in the order given: the N free clients nearest to the OSS's routers, removed
from the free set before the next OSS), and for comparison the clients a job launcher gives
(contiguous, node order) or a random choice of the same number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lnetgen import nodes
from lnetgen.model import Site
from lnetgen.place.hops import net_hops
from lnetgen.plan import Plan
from lnetgen.traffic import FloatArray, IntArray, PlanIndex, index_plan, input_error
from lnetgen.traffic.settings import rounded


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


def _oss_ids(ix: PlanIndex, oss: Sequence[str]) -> list[int]:
    """The plan's server ids of the OSS named.

    A server of the plan that is not an OSS (an MDS named by mistake, ``--oss mds01``) is
    refused by name and role, with the code of an unknown server (``E-ANALYZE-SERVER``, which
    the command reports at ``--oss``, exit 2): an administrator asked to place I/O next to an
    OSS expects to hear that the name is an MDS, not that "some OSS" lack OSTs."""
    if not oss:
        raise input_error("E-USAGE", "name at least one OSS")
    if len(set(oss)) != len(oss):
        raise input_error("E-USAGE", "an OSS is named twice")
    ids = [ix.server_id(s) for s in oss]
    role = {s.name: s.role for s in ix.site.servers}
    other = [name for name in oss if role.get(name, "oss") != "oss"]
    if other:
        kind = "/".join(sorted({role[n].upper() for n in other}))
        what = f"is an {kind}, not an OSS" if len(other) == 1 else f"are {kind}, not OSS"
        raise input_error(
            "E-ANALYZE-SERVER",
            f"{nodes.fold(other)} {what}: clients are placed for the OSTs of an OSS",
        )
    return ids


def _counts(ix: PlanIndex, ids: list[int], per_oss: int | None) -> list[int]:
    if per_oss is None:
        osts = {s.name: len(s.osts) for s in ix.site.servers}
        counts = [osts.get(ix.servers[i], 0) for i in ids]
        bare = [ix.servers[i] for i, n in zip(ids, counts, strict=True) if not n]
        if bare:
            raise input_error(
                "E-USAGE",
                f"give --per-oss: {nodes.fold(bare)} list(s) no OSTs, so the default "
                "(one client per OST) is none",
            )
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


def _request(
    site: Site,
    plan: Plan,
    oss: Sequence[str],
    per_oss: int | None,
    index: PlanIndex | None,
) -> tuple[PlanIndex, list[int], list[int]]:
    """A placement request checked: the index, the OSS ids and the clients wanted per OSS."""
    ix = index or index_plan(site, plan)
    ids = _oss_ids(ix, oss)
    return ix, ids, _counts(ix, ids, per_oss)


def clients_by_name(site: Site, nodeset: str) -> list[int]:
    """Client indices of a node set; raises ``InputError`` naming clients the site lacks, or
    for a set larger than any inventory (counted before ClusterShell builds it)."""
    from lnetgen.inventory.clients import MAX_CLIENTS

    bound = nodes.count(nodeset)
    if bound > MAX_CLIENTS:
        raise input_error(
            "E-USAGE",
            f"{nodeset!r} names about {bound:,} nodes; an inventory holds at most "
            f"{MAX_CLIENTS:,} clients",
        )
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
                rounded(d.mean()) if len(d) else 0.0,
                rounded(d.max()) if len(d) else 0.0,
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
    ix, ids, counts = _request(site, plan, oss, per_oss, index)
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
    ix, ids, counts = _request(site, plan, oss, per_oss, index)
    return _dealt(ix, "default", ids, counts, _available(ix, available))


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
    ix, ids, counts = _request(site, plan, oss, per_oss, index)
    pool = np.random.default_rng(seed).permutation(_available(ix, available))
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
