"""Time ``lnetgen advise routers`` at the command's defaults (up to one router moved, a budget
of 400 placements, the default workload: one single-stripe file per OST on random nodes) on
Spider and Blue Waters, next to its floors.

Per site it prints the search's time and the predictions it made, next to floor 1: one
prediction's solve (the max-min rates and IOR's completion of the site as it is, its problem
built already) times the predictions made -- what any search that solves each candidate
placement spends (a move of a router no rank's data crosses needs no solve, so a search can
go below it); and floor 2: the time to load the site and solve its plan once, which the
command spends before searching.  Then the process's peak RSS.

    python bench/advise_routers.py [--sites spider,bluewaters] [--count 1] [--budget 400]
                                   [--repeat N]

(with lnetgen importable: installed, or ``PYTHONPATH=.`` from the repository root).  Times are
wall-clock seconds, best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import os
import sys

from timing import best, peak_rss_line


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sites", default="spider,bluewaters")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()

    from lnetgen.advise.routers import advise_routers
    from lnetgen.api import load_plan
    from lnetgen.throughput import DEFAULT
    from lnetgen.throughput.predict import prepare, solved
    from lnetgen.traffic import index_plan

    print(
        f"{'site':<12} {'advise':>8} {'predictions':>11} {'floor 1':>8} {'x floor':>7} "
        f"{'floor 2':>8}  advice"
    )
    for name in args.sites.split(","):
        path = os.path.join(here, "..", "sites", f"{name}.yaml")
        t_load, (site, plan, _warnings) = best(1, lambda path=path: load_plan(path, None, None))
        t_adv, a = best(
            args.repeat,
            lambda site=site, plan=plan: advise_routers(
                site, plan, DEFAULT, args.count, args.budget
            ),
        )
        built, njob, nodes = prepare(site, plan, index_plan(site, plan), DEFAULT)
        t_solve, _ = best(
            args.repeat,
            lambda site=site, plan=plan, built=built, njob=njob, nodes=nodes: solved(
                site, plan, DEFAULT, built, njob, nodes
            ),
        )
        floor = t_solve * a.evaluated
        advice = "; ".join(a.edits) or "keep the routers where they are"
        print(
            f"{name:<12} {t_adv:>7.2f}s {a.evaluated:>11} {floor:>7.2f}s {t_adv / floor:>6.1f}x "
            f"{t_load:>7.2f}s  {a.method}: {advice}"
        )
    print(peak_rss_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
