"""nearest-neighbor: one storage LNet per leaf module; per set, each client uses the router nearest
to it (torus hops with wrap-around, seed 000 §5; link counts on a fat-tree or dragonfly client
side, ``lnetgen.distance``), under static load balancing: no router serves more than
ceil(clients/routers) clients.

Among all balanced assignments the total hop count is minimal: each set is an exact min-cost
transportation problem (``lnetgen.transport``), solved deterministically.  As in round-robin,
the set's other routers stay at priority 1 for failover.
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


def design(site: Site) -> list[NetSpec]:
    from lnetgen import transport  # imported only when this layout is used

    def pick(members: npt.NDArray[np.intp], routers: list[Router]) -> npt.NDArray[np.int64]:
        cost = hop_costs(site, members, routers)
        cap = np.full(len(routers), math.ceil(len(members) / len(routers)), dtype=np.int64)
        return transport.assign(cost, cap)

    return leaf_sets(site, pick, "nearest router of {leaf} (balanced, minimal hops)")


STRATEGY = Strategy(
    NAME,
    "one LNet per leaf module; each client uses the nearest router "
    "(exact min-cost balanced assignment)",
    design,
)
