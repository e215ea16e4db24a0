"""The link loads placement saves: placed clients as a workload, and the torus link loads of
placed clients against a default (contiguous, node order) and a random choice of the same
number of clients for the same OSS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lnetgen.model import Site
from lnetgen.place.clients import ClientPlacement, default_clients, place_clients, random_clients
from lnetgen.plan import Plan
from lnetgen.traffic import (
    LinkStats,
    PlanIndex,
    Settings,
    Workload,
    index_plan,
    input_error,
    torus_loads,
)


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
