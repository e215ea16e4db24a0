"""Scale benchmark: validate + generate + analyze on synthetic sites of
25k, 50k and 100k clients; prints wall time and peak memory per step and the growth ratios.

``python bench/bench_scale.py [--sizes 25000,50000,100000] [--strategy groups]``

Each step runs in a fresh interpreter so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from synth import synth

RUNNER = r"""
import json, resource, sys, time
from lnetgen.cli import main
t = time.perf_counter()
try:
    main(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as exc:
    code = exc.code or 0
dt = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sys.stderr.write("\nBENCH " + json.dumps({"seconds": dt, "rss_kb": rss, "code": code}) + "\n")
"""


def step(args: list[str]) -> dict[str, float]:
    res = subprocess.run(
        [sys.executable, "-c", RUNNER, *args], capture_output=True, text=True, check=False
    )
    line = [ln for ln in res.stderr.splitlines() if ln.startswith("BENCH ")]
    if not line:
        raise SystemExit(f"step {args[0]} failed:\n{res.stderr[-2000:]}")
    out: dict[str, float] = json.loads(line[-1][6:])
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="25000,50000,100000")
    ap.add_argument("--strategy", default="groups")
    ap.add_argument("--topology", default="torus", choices=["torus", "fat-tree"])
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[int, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            site = os.path.join(tmp, f"synth-{n}.yaml")
            with open(site, "w", encoding="utf-8") as fh:
                fh.write(synth(n, max(4, n // 128), args.topology))
            out = os.path.join(tmp, f"out-{n}")
            steps = {
                "validate": ["validate", site],
                "generate": ["generate", site, "-s", args.strategy, "--out", out],
                "analyze": ["analyze", site, "-s", args.strategy, "--format", "json"],
            }
            results[n] = {}
            for name, cmd in steps.items():
                t = time.perf_counter()
                r = step(cmd)
                r["wall"] = time.perf_counter() - t
                results[n][name] = r
                print(
                    f"{n:>7} clients  {name:<9} {r['wall']:7.2f} s wall "
                    f"({r['seconds']:6.2f} s in command)  peak {r['rss_kb'] / 1024:7.1f} MiB"
                    f"  exit {int(r['code'])}",
                    flush=True,
                )
    base = sizes[0]
    for n in sizes[1:]:
        for name in results[n]:
            tr = results[n][name]["wall"] / results[base][name]["wall"]
            mr = results[n][name]["rss_kb"] / results[base][name]["rss_kb"]
            print(
                f"{name:<9} {n // 1000}k/{base // 1000}k: time x{tr:.2f}, memory x{mr:.2f} "
                f"(clients x{n / base:.1f})"
            )
    total = {n: sum(r["wall"] for r in results[n].values()) for n in sizes}
    print("total per size: " + ", ".join(f"{n}: {t:.1f} s" for n, t in total.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
