"""Where a workload's ranks run (its ``nodes`` key) and, for ``ost_choice=nearest``, which OST
each single-stripe rank takes; :func:`lnetgen.throughput.workload.build_ranks` calls them once
the ranks' OSTs are laid out.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from lnetgen.diagnostics import InputError
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.traffic import IntArray, PlanIndex


class WorkloadSpec(Protocol):
    """What this module reads of a :class:`lnetgen.throughput.workload.WorkloadSpec` (named
    here, not imported: that module imports this one)."""

    @property
    def nodes(self) -> str: ...
    @property
    def ranks_per_node(self) -> int: ...
    @property
    def seed(self) -> int: ...
    def error(self, key: str, message: str) -> InputError: ...


def rank_nodes(
    site: Site,
    plan: Plan,
    ix: PlanIndex,
    spec: WorkloadSpec,
    total: int,
    pair_rank: IntArray,
    pair_ost: IntArray,
    ost_server: IntArray,
) -> IntArray:
    """The client of each of the ``total`` ranks; ``InputError`` (E-WORKLOAD at ``nodes``)
    when the choice cannot be honoured."""
    from lnetgen.place.clients import clients_by_name

    nclients = len(site.clients)
    per = spec.ranks_per_node
    need = -(-total // per)
    if spec.nodes == "placed":
        if per != 1:
            raise spec.error("nodes", "nodes=placed puts one rank on a node (ranks_per_node=1)")
        first_pair = np.unique(pair_rank, return_index=True)[1]
        return _placed(site, plan, ix, spec, ost_server[pair_ost[first_pair]])
    if spec.nodes == "linear":
        pool = np.arange(need, dtype=np.int64)
    elif spec.nodes == "random":
        pool = (
            np.random.default_rng(spec.seed)
            .choice(nclients, size=need, replace=False)
            .astype(np.int64)
        )
    else:
        try:
            chosen = clients_by_name(site, spec.nodes)
        except InputError as exc:
            raise spec.error("nodes", f"nodes: {exc.diagnostics[0].message}") from None
        if len(chosen) < need:
            raise spec.error("nodes", f"{need} nodes wanted, {spec.nodes} has {len(chosen)}")
        pool = np.asarray(sorted(chosen)[:need], dtype=np.int64)
    return np.repeat(pool, per)[:total]


def _placed(
    site: Site, plan: Plan, ix: PlanIndex, spec: WorkloadSpec, rank_server: IntArray
) -> IntArray:
    """``nodes=placed``: ``lnetgen place clients``' greedy (seed 000 §5) with as many clients
    per OSS as the workload puts ranks on it -- one per OST of a single-stripe file per
    process, whatever OST count each OSS has.  The OSS are taken in the order of their first
    rank; each takes the free clients nearest to the routers it uses, which are then no longer
    free.  OSS in a row wanting the same number go through one ``place_clients`` call, so a
    site whose OSS all want the same number is placed exactly as ``place clients --per-oss N``
    places it; rank ``j`` of an OSS runs on its ``j``-th client.

    An OSS's ranks differ from its OST count when ``ranks``, ``files_per_ost``,
    ``stripe_count`` or ``osts`` say so; that is placed alike (it was refused, "the same number
    of ranks on every OSS", before)."""
    from lnetgen.place.clients import place_clients

    order: list[int] = []
    count: dict[int, int] = {}
    for s in rank_server.tolist():
        if s not in count:
            order.append(s)
        count[s] = count.get(s, 0) + 1
    free = np.ones(len(site.clients), dtype=bool)
    clients: dict[int, tuple[int, ...]] = {}
    i = 0
    while i < len(order):
        j = i + 1
        while j < len(order) and count[order[j]] == count[order[i]]:
            j += 1
        run = [ix.servers[s] for s in order[i:j]]
        available = None if i == 0 else np.nonzero(free)[0].tolist()
        try:
            placed = place_clients(site, plan, run, count[order[i]], available, index=ix)
        except InputError as exc:
            raise spec.error("nodes", f"nodes=placed: {exc.diagnostics[0].message}") from None
        for o in placed.per_oss:
            clients[ix.server_id(o.server)] = o.clients
            free[list(o.clients)] = False
        i = j
    by_server = np.argsort(rank_server, kind="stable")  # each OSS's ranks, in rank order
    node = np.empty(len(rank_server), dtype=np.int64)
    start = 0
    for s in sorted(count):
        mine = by_server[start : start + count[s]]
        node[mine] = clients[s]
        start += count[s]
    return node


def nearest_osts(
    ix: PlanIndex, node: IntArray, pair_rank: IntArray, ost_server: IntArray
) -> IntArray:
    """Seed 004: each rank (in rank order) takes the free OST whose server its node reaches
    through the fewest torus hops to its gateways (ties: lower OST); when every OST is taken,
    the nearest again.  Single-stripe file-per-process only (the caller checks)."""
    from lnetgen.place.hops import net_hops

    hops = net_hops(ix)  # (clients, nets)
    ost_net = ix.server_net[ost_server]
    taken = np.zeros(len(ost_server), dtype=bool)
    out = np.empty(len(node), dtype=np.int64)
    for j, n in enumerate(node.tolist()):
        d = hops[n, ost_net]
        free = np.where(taken, np.inf, d)
        pick = int(np.argmin(free if np.isfinite(free).any() else d))
        taken[pick] = True
        if taken.all():
            taken[:] = False
        out[j] = pick
    return out[pair_rank]
