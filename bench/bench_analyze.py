"""Time ``lnetgen analyze`` on a Spider-sized site: every client writing to (and reading from)
every storage net, routed over the torus.

For each strategy it prints the time to solve, to index the plan, to analyze with per-router
link figures (one ``topology.link_loads`` call per router and direction) and without them
(batched calls), the N-1 scan, and the placed/default/random comparison (one client per OST),
with the headline numbers next to the timings.

    python bench/bench_analyze.py [--site sites/spider.yaml] [--strategies a,b] [--repeat N]

(with lnetgen importable: installed, or ``PYTHONPATH=.`` from the repository root).  Times are
wall-clock seconds, best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import os
import sys

from timing import best


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    default_site = os.path.join(here, "..", "sites", "spider.yaml")
    if not os.path.exists(default_site):
        default_site = os.path.join(here, "..", "sites", "demo.yaml")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=default_site)
    ap.add_argument("--strategies", default=None, help="comma-separated (default: all)")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()

    from lnetgen import place
    from lnetgen.analyze import analyze, index_plan, n_minus_1
    from lnetgen.inventory import load_site
    from lnetgen.solve import solve, strategy_names

    t_load, (site, _warnings) = best(1, lambda: load_site(args.site))
    n = len(site.clients)
    print(
        f"{os.path.basename(args.site)}: {n} clients, {len(site.routers)} routers, "
        f"{len(site.servers)} servers, "
        f"{sum(len(s.osts) for s in site.servers)} OSTs; loaded in {t_load:.2f} s"
    )
    names = args.strategies.split(",") if args.strategies else strategy_names()
    for name in names:
        t_solve, plan = best(1, lambda name=name: solve(site, name))  # type: ignore[misc]
        t_index, ix = best(args.repeat, lambda plan=plan: index_plan(site, plan))  # type: ignore[misc]
        t_ports, a = best(
            args.repeat,
            lambda plan=plan, ix=ix: analyze(site, plan, index=ix, with_n_minus_1=False),  # type: ignore[misc]
        )
        t_batch, _b = best(
            args.repeat,
            lambda plan=plan, ix=ix: analyze(  # type: ignore[misc]
                site, plan, index=ix, with_n_minus_1=False, ports=False
            ),
        )
        t_n1, nm = best(args.repeat, lambda ix=ix: n_minus_1(ix))  # type: ignore[misc]
        # client -> router pairs routed per direction (a client's pairs over all nets)
        pairs = sum(r.clients for r in a.torus.routers) if a.torus is not None else 0
        print(f"\n{name}: {len(ix.nets)} storage nets, {len(ix.classes)} client classes")
        print(f"  solve            {t_solve:7.2f} s")
        print(f"  index plan       {t_index:7.2f} s")
        print(f"  analyze (ports)  {t_ports:7.2f} s   spine {100 * a.fabric.writes.fraction:.2f} %")
        print(f"  analyze (batch)  {t_batch:7.2f} s   {pairs} client->router pairs each way")
        if a.torus is not None:
            tw, tr = a.torus.writes, a.torus.reads
            print(
                f"    uniform torus: writes max {tw.max:.2f} p99 {tw.p99:.2f} flows/link, "
                f"{tw.saturated} saturated; reads max {tr.max:.2f}, {tr.saturated} saturated"
            )
        worst = nm.worst
        print(
            f"  N-1 scan         {t_n1:7.2f} s   worst "
            + (f"{worst.router}: lost {worst.lost}, fallback {worst.fallback}" if worst else "none")
        )
        oss = place.oss_with_osts(site, plan)
        if site.torus is not None and oss:
            t_place, cmp = best(
                args.repeat,
                lambda plan=plan, ix=ix, oss=oss: place.compare_placements(  # type: ignore[misc]
                    site, plan, oss, None, index=ix
                ),
            )
            print(
                f"  placement x3     {t_place:7.2f} s   max flows/link writes placed "
                f"{cmp.placed.writes.max:.2f}, default {cmp.default.writes.max:.2f}, random "
                f"{cmp.random.writes.max:.2f} ({len(oss)} OSS)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
