"""Time the throughput prediction on Blue Waters' full machine, next to its floor.

For each workload (seed 001's file-per-process write on 5,184 random nodes, the all-XE write
on 22,580 nodes, the ten shared files in pools on 22,600 nodes) it prints the best-of-N time
of ``lnetgen.throughput.predict`` (ranks built, paths laid out, max-min rates, IOR's
completion replayed), next to the floor: laying out the same subflows' torus loads once
(``topology.link_loads``), which any prediction must do at least once; and the process's
peak RSS.

    python bench/bench_throughput.py [--site sites/bluewaters.yaml] [--repeat N]

(with lnetgen importable: installed, or ``PYTHONPATH=.`` from the repository root).
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial

import numpy as np
from timing import best, peak_rss_line

WORKLOADS = (
    ("fpp 17,280 ranks / 5,184 nodes", "ranks=17280,ranks_per_node=4,nodes=random"),
    ("fpp 22,580 nodes (all XE)", "ranks=22580,nodes=linear"),
    (
        "shared, 10 pools x 144 OSTs, 22,600 nodes",
        "pattern=shared-file,filesystems=scratch,files=10,stripe_count=0,ranks=22600,nodes=random",
    ),
)


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", default=os.path.join(here, "..", "sites", "bluewaters.yaml"))
    ap.add_argument("--strategy", default="groups")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from lnetgen import topology
    from lnetgen.api import load_plan
    from lnetgen.throughput import build_ranks, parse_inline, predict
    from lnetgen.throughput.predict import _build
    from lnetgen.traffic import index_plan

    site, plan, _ = load_plan(args.site, args.strategy, None)
    ix = index_plan(site, plan)
    assert site.torus is not None
    print(f"{'workload':<44} {'predict':>9} {'floor':>9} {'x floor':>8} {'GB/s':>8}")
    for label, text in WORKLOADS:
        spec = parse_inline(text)
        took, pred = best(args.repeat, partial(predict, site, plan, spec, index=ix))
        p = _build(site, ix, build_ranks(site, plan, ix, spec), ()).problem
        assert p.torus is not None
        runs = p.torus.runs
        floor, _ = best(args.repeat, lambda r=runs: topology.runs_loads(r, np.ones(r.nflows)))
        agg = pred.aggregate_mb_s
        gb = f"{agg / 1000:.1f}" if agg is not None else "n/a"
        print(f"{label:<44} {took:>8.2f}s {floor:>8.3f}s {took / floor:>7.0f}x {gb:>8}")
    print(peak_rss_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
