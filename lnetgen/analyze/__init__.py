"""Analysis of a solved plan against its inventory: storage-fabric spine crossings, torus link
loads, router failures, and the strategies side by side.

Built on the traffic model of ``lnetgen.traffic`` (plan index, live routes, flows, torus link
loads), whose names are re-exported here.  Modules: ``fabric`` (spine crossings, uplinks),
``failures`` (pairs hurt by a failure, N-1), ``plain`` (JSON-ready data), ``analysis`` (one
plan, all of the above), ``comparison`` (every strategy, with placement).  Nothing prints.
"""

from lnetgen.analyze.analysis import Analysis, analyze
from lnetgen.analyze.comparison import CompareRow, compare
from lnetgen.analyze.fabric import FabricPhase, FabricReport, LeafLoad
from lnetgen.analyze.failures import (
    DEGRADED,
    FALLBACK,
    LOST,
    OK,
    FailureReport,
    NMinus1,
    PairStatus,
    ServerDown,
    SingleFailure,
    WorstFailure,
    failure_report,
    n_minus_1,
    worst_failures,
)
from lnetgen.analyze.plain import plain
from lnetgen.traffic import (
    LINK_MB_S,
    OST_MB_S,
    PORTS,
    BoolArray,
    Finding,
    FloatArray,
    IntArray,
    LinkStats,
    PlanIndex,
    RouterUse,
    Settings,
    Shares,
    TorusReport,
    Workload,
    best_gateways,
    client_shares,
    index_plan,
    input_error,
    link_load_arrays,
    resolve_failures,
    torus_loads,
)

__all__ = [
    "DEGRADED",
    "FALLBACK",
    "LINK_MB_S",
    "LOST",
    "OK",
    "OST_MB_S",
    "PORTS",
    "Analysis",
    "BoolArray",
    "CompareRow",
    "FabricPhase",
    "FabricReport",
    "FailureReport",
    "Finding",
    "FloatArray",
    "IntArray",
    "LeafLoad",
    "LinkStats",
    "NMinus1",
    "PairStatus",
    "PlanIndex",
    "RouterUse",
    "ServerDown",
    "Settings",
    "Shares",
    "SingleFailure",
    "TorusReport",
    "Workload",
    "WorstFailure",
    "analyze",
    "best_gateways",
    "client_shares",
    "compare",
    "failure_report",
    "index_plan",
    "input_error",
    "link_load_arrays",
    "n_minus_1",
    "plain",
    "resolve_failures",
    "torus_loads",
    "worst_failures",
]
