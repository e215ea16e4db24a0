"""nearest-neighbor: one storage LNet per leaf module; per set, each client uses the router nearest
to it (torus hops with wrap-around, seed 000 §5; link counts on a fat-tree or dragonfly client
side, ``lnetgen.distance``), under static load balancing: no router serves more than
ceil(clients/routers) clients.

Among all balanced assignments the total hop count is minimal: each set is an exact min-cost
transportation problem (``lnetgen.transport``), solved deterministically.  As in round-robin,
the set's other routers stay at priority 1 for failover.  On a dragonfly, equal-hop ties across
global links are broken so that a group without a router of the set spreads over the set's
routers (:func:`spread_global_ties`).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from lnetgen.model import Router, Site
from lnetgen.strategies.base import NetSpec, Strategy, leaf_sets, solve_error

NAME = "nearest-neighbor"


def hop_costs(site: Site, client_idx: np.ndarray, routers: list[Router]) -> np.ndarray:
    """(clients x routers) hop counts from each client to each router."""
    from lnetgen.distance import client_router_hops, has_distances

    if not has_distances(site):
        raise solve_error(
            site,
            "E-STRATEGY",
            "nearest-neighbor needs a client topology (a torus, a fat tree or a dragonfly) to "
            "measure distances",
        )
    return client_router_hops(site, client_idx, routers)


def spread_global_ties(
    site: Site, members: npt.NDArray[np.intp], hops: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """On a dragonfly, the costs with equal-hop ties broken so that clients with no router of
    the set in their group spread over the set's routers instead of all going to one.

    Every router in another group is 5 hops away, so a whole group's clients could land on one
    router and one pair of groups' global links.  Here a client on switch ``s`` of its group
    prefers, among routers at 5 hops, the set's router ``j`` with the smallest
    ``(j - s) mod m`` (``m`` routers): consecutive switches prefer consecutive routers.  The
    hops are scaled by ``K = n (m - 1) + 1`` (``n`` clients) so that the tie-break never
    outweighs a single hop: the total hop count stays minimal.  Other client sides: ``hops``
    unchanged."""
    dfly = site.dragonfly
    n, m = hops.shape
    if dfly is None or site.clients.switch is None or m < 2 or not n:
        return hops
    from lnetgen.topology import DRAGONFLY_GLOBAL_HOPS

    local = (site.clients.switch[members] % dfly.switches).astype(np.int64)
    tie = (np.arange(m, dtype=np.int64)[None, :] - local[:, None]) % m
    far = hops >= DRAGONFLY_GLOBAL_HOPS
    return np.asarray(hops * (n * (m - 1) + 1) + np.where(far, tie, 0), dtype=np.int64)


def design(site: Site) -> list[NetSpec]:
    from lnetgen import transport  # imported only when this layout is used

    def pick(members: npt.NDArray[np.intp], routers: list[Router]) -> npt.NDArray[np.int64]:
        cost = spread_global_ties(site, members, hop_costs(site, members, routers))
        cap = np.full(len(routers), math.ceil(len(members) / len(routers)), dtype=np.int64)
        return transport.assign(cost, cap)

    return leaf_sets(site, pick, "nearest router of {leaf} (balanced, minimal hops)")


STRATEGY = Strategy(
    NAME,
    "one LNet per leaf module; each client uses the nearest router "
    "(exact min-cost balanced assignment)",
    design,
)
