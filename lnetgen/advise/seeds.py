"""The random draws advice is judged on.

A workload that draws its nodes at random (``nodes=random``) or draws other jobs' nodes
(``background``) predicts one draw per seed; advice judged on one draw may fit that draw only
(Blue Waters: a router move gaining 33 GB/s on seed 0 gains nothing on seeds 1-4).  So advice
is judged on ``SEEDS`` draws -- the workload's seed and the ones after it (0-4 by default) --
and given only when its gain holds on every one.  A workload that draws nothing is judged once.
"""

from __future__ import annotations

from lnetgen.throughput import WorkloadSpec

#: How many draws a random workload's advice is judged on.
SEEDS = 5


def draws(spec: WorkloadSpec) -> bool:
    """The workload's ranks or background depend on its seed."""
    return spec.nodes == "random" or spec.background > 0


def seeds_of(spec: WorkloadSpec) -> tuple[int, ...]:
    """``spec.seed`` and the ``SEEDS - 1`` after it when the workload draws, else its own."""
    return tuple(spec.seed + i for i in range(SEEDS)) if draws(spec) else (spec.seed,)


__all__ = ["SEEDS", "draws", "seeds_of"]
