"""Time ``lnetgen report`` on Blue Waters (23x24x24 Gemini torus, 25,712 clients, 582 routers)
and print the size of the HTML it writes.

For the default strategy, for baseline (every flow crossing a spine) and, with ``--compare``,
for every strategy side by side, it prints the time to build the report data (solve, analyze,
torus link loads, layout) and to render the HTML, the file size, and how that size splits
over the pictures.

    python bench/bench_report.py [--site sites/bluewaters.yaml] [--compare] [--out DIR]

(with lnetgen importable: installed, or ``PYTHONPATH=.`` from the repository root).  Times are
wall-clock seconds of one run.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=os.path.join(here, "..", "sites", "bluewaters.yaml"))
    ap.add_argument("--compare", action="store_true", help="also every strategy side by side")
    ap.add_argument("--out", default=None, help="keep the HTML files in this directory")
    args = ap.parse_args()

    from lnetgen.inventory import load_site
    from lnetgen.report import build_report, render_html
    from lnetgen.solve import strategy_names

    t0 = time.perf_counter()
    site, warnings = load_site(args.site)
    print(
        f"{os.path.basename(args.site)}: {len(site.clients)} clients, {len(site.routers)} "
        f"routers, {len(site.servers)} servers; loaded in {time.perf_counter() - t0:.2f} s"
    )
    runs = [[site.strategy.default], ["baseline"]]
    if args.compare:
        runs.append(strategy_names())
    out_dir = args.out or tempfile.mkdtemp(prefix="lnetgen-report-")
    for names in runs:
        t1 = time.perf_counter()
        rep = build_report(site, names, warnings)
        t2 = time.perf_counter()
        html = render_html(rep)
        t3 = time.perf_counter()
        data = html.encode("utf-8")
        label = "compare" if len(names) > 1 else names[0]
        path = os.path.join(out_dir, f"{site.name}-{label}.html")
        with open(path, "wb") as fh:
            fh.write(data)
        svgs = re.findall(r"<svg\b.*?</svg>", html, flags=re.S)
        by_kind: dict[str, int] = {}
        for block in svgs:
            aria = re.search(r'aria-label="([^"]*)"', block)
            name = aria.group(1) if aria else ""
            kind = (
                "torus maps"
                if ": max over z" in name or "slice z=" in name
                else "fabric"
                if name.startswith("storage fabric")
                else "other pictures"
            )
            by_kind[kind] = by_kind.get(kind, 0) + len(block.encode("utf-8"))
        print(f"\n{label}:")
        print(f"  build (solve, analyze, link loads, layout)  {t2 - t1:7.2f} s")
        print(f"  render HTML                                 {t3 - t2:7.2f} s")
        print(f"  file size                                   {len(data) / 1e6:7.2f} MB  ({path})")
        for kind, size in sorted(by_kind.items()):
            print(f"    {kind:<20} {size / 1e6:6.2f} MB")
        print(f"    {'text, tables, CSS':<20} {(len(data) - sum(by_kind.values())) / 1e6:6.2f} MB")
        print(f"  inline SVG pictures: {len(svgs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
