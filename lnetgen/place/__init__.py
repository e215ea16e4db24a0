"""Placement: which clients should do the I/O for which OSS, and which OSTs a client should
use, by the hops from a client to the routers it uses in the plan.

* :func:`place_clients` -- seed 000 §5, greedy per OSS in the order given: the N free clients
  nearest to the OSS's routers, removed from the free set before the next OSS.
* :func:`place_osts` -- seed 004: the OSTs whose primary routers are fewest hops from a client,
  with ``lfs setstripe -c 1 -i <index>`` lines.
* :func:`compare_placements` -- torus link loads of placed clients against a default
  (contiguous, node order) and a random choice of the same number of clients for the same OSS.

Modules: ``hops`` (distances), ``clients`` (choosing clients), ``loads`` (their link loads),
``osts`` (choosing OSTs).
"""

from lnetgen.place.clients import (
    ClientPlacement,
    OssClients,
    clients_by_name,
    default_clients,
    oss_with_osts,
    place_clients,
    random_clients,
)
from lnetgen.place.hops import net_hops
from lnetgen.place.loads import (
    PlacementComparison,
    PlacementLoads,
    compare_placements,
    placement_loads,
    workload,
)
from lnetgen.place.osts import OstChoice, place_osts

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
