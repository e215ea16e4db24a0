"""Predicted bandwidth: a workload as IOR runs it (``workload``), max-min fair sharing of every
component's rate along each rank's path (``share``, filled by ``fill``), and the aggregate,
bottleneck and spread of a plan (``predict``, its problem built by ``problem``, ranks with one
path merged by ``classes``); ``moved``: predictions with routers elsewhere; ``sources``: the
inventory entry (or option) behind each rate printed.  Reads ``Site.rates``; a rate the site
does not give limits nothing and is reported "n/a", and a prediction across it is a bound.
Modules, lowest first: ``fill``, ``share``, ``workload``, ``classes``, ``problem``,
``sources``, ``predict``, ``moved``.
"""

from lnetgen.throughput.predict import (
    Bottleneck,
    Prediction,
    paths_per_link,
    predict,
    predict_ops,
)
from lnetgen.throughput.workload import (
    DEFAULT,
    Ranks,
    WorkloadSpec,
    build_ranks,
    load_workload,
    parse_inline,
)

__all__ = [
    "DEFAULT",
    "Bottleneck",
    "Prediction",
    "Ranks",
    "WorkloadSpec",
    "build_ranks",
    "load_workload",
    "parse_inline",
    "paths_per_link",
    "predict",
    "predict_ops",
]
