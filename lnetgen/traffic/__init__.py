"""The traffic model under ``lnetgen.analyze`` and ``lnetgen.place``: a plan indexed against
its site, which routes carry traffic with some routers down, and the flows they put on links.

Everything here reads a ``Plan`` (what the route tables say) and the ``Site`` (where clients,
routers and servers sit) and returns data; nothing prints.  Modules, lowest first:
``settings`` (rates, workloads), ``rows`` (route rows and their evaluation), ``findings``
(routes dead on paper), ``index`` (the plan as arrays), ``routes`` (failed routers, shares of
live routes), ``flows`` (where the flows go), ``torus`` (torus link loads).
"""

from lnetgen.traffic.findings import Finding
from lnetgen.traffic.index import PlanIndex, index_plan
from lnetgen.traffic.routes import Shares, best_gateways, client_shares, resolve_failures
from lnetgen.traffic.settings import (
    LINK_MB_S,
    OST_MB_S,
    BoolArray,
    FloatArray,
    IntArray,
    Settings,
    Workload,
    input_error,
)
from lnetgen.traffic.torus import (
    PORTS,
    LinkStats,
    RouterUse,
    TorusReport,
    link_load_arrays,
    torus_loads,
)

__all__ = [
    "LINK_MB_S",
    "OST_MB_S",
    "PORTS",
    "BoolArray",
    "Finding",
    "FloatArray",
    "IntArray",
    "LinkStats",
    "PlanIndex",
    "RouterUse",
    "Settings",
    "Shares",
    "TorusReport",
    "Workload",
    "best_gateways",
    "client_shares",
    "index_plan",
    "input_error",
    "link_load_arrays",
    "resolve_failures",
    "torus_loads",
]
