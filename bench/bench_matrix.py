"""The scale matrix: every shipped site x strategy, and synthetic 25k / 50k / 100k clients.

For each run it prints the command's wall time and peak RSS next to its floor, measured in the
same run on the same machine:

* ``generate``: the I/O floor is copying the finished tree (``cp -r``) plus parsing the
  inventory (PyYAML, no checks); the target is generate <= 3x that floor, and the tree's
  sizes (``plan.json``, the route CSVs, the whole tree);
* ``compare`` and ``report --compare`` on Blue Waters (target < 15 s each);
* ``analyze`` on synthetic sites of 25k / 50k / 100k clients (target < 10 s at 100k and
  25k -> 100k growing <= 4.5x);
* the live-dump reader: peak Python memory of reading one large ``lnetctl export`` file
  against the file's size (target <= 3x).

    python bench/bench_matrix.py [--sites spider,bluewaters] [--sizes 25000,50000,100000]
        [--skip generate,compare,analyze,diff]

Each command runs in a fresh interpreter (its peak RSS is its own).  On a busy machine run it
twice: the floor is measured beside each figure, so the ratios stay meaningful.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from synth import synth

ROOT = Path(__file__).resolve().parent.parent
SITES = ROOT / "sites"
STRATEGIES = ("projection", "round-robin", "nearest-neighbor", "groups", "baseline")


def run(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of ``lnetgen ARGS`` in a fresh interpreter."""
    cmd = [sys.executable, "-m", "lnetgen", *args]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    assert proc.stderr is not None
    proc.stderr.close()
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def parse_floor(site: Path) -> float:
    code = (
        "import sys, yaml\n"
        "L = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)\n"
        "yaml.load(open(sys.argv[1], encoding='utf-8'), Loader=L)\n"
    )
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(site)], check=True)
    return time.perf_counter() - t


def copy_floor(tree: Path, tmp: Path) -> float:
    dest = tmp / "copy"
    shutil.rmtree(dest, ignore_errors=True)
    t = time.perf_counter()
    subprocess.run(["cp", "-r", str(tree), str(dest)], check=True)
    os.sync()
    took = time.perf_counter() - t
    shutil.rmtree(dest, ignore_errors=True)
    return took


def size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def bench_generate(sites: list[str], tmp: Path) -> None:
    print("generate: time and peak RSS vs the I/O floor (cp -r of the tree + YAML parse)")
    print(
        f"  {'site':<11} {'strategy':<17} {'time':>7} {'floor':>6} {'ratio':>6} {'RSS MiB':>8} "
        f"{'plan MB':>8} {'csv MB':>7} {'tree MB':>8}"
    )
    for name in sites:
        site = SITES / f"{name}.yaml"
        for strategy in STRATEGIES:
            out = tmp / f"out-{name}-{strategy}"
            wall, rss, code = run(["generate", str(site), "-s", strategy, "--out", str(out), "-q"])
            if code != 0:
                print(f"  {name:<11} {strategy:<17} (does not apply: exit {code})")
                continue
            floor = copy_floor(out, tmp) + parse_floor(site)
            routes = size_mb(out / "routes")
            print(
                f"  {name:<11} {strategy:<17} {wall:6.2f}s {floor:5.2f}s {wall / floor:5.1f}x "
                f"{rss:8.0f} {size_mb(out / 'plan.json'):8.1f} {routes:7.1f} "
                f"{size_mb(out):8.1f}",
                flush=True,
            )
            shutil.rmtree(out, ignore_errors=True)
    print("  targets: ratio <= 3x; Spider nearest-neighbor RSS < 400 MiB, plan.json < 50 MB,")
    print("  route CSVs < 50 MB, tree < 600 MB")


def bench_compare(tmp: Path) -> None:
    site = str(SITES / "bluewaters.yaml")
    print("Blue Waters (target < 15 s each):")
    for label, args in (
        ("compare", ["compare", site, "-q"]),
        ("report --compare", ["report", site, "--compare", "--out", str(tmp / "bw.html")]),
    ):
        wall, rss, code = run(args)
        floor = parse_floor(SITES / "bluewaters.yaml")
        print(
            f"  {label:<17} {wall:6.2f}s (inventory parse {floor:.2f}s) peak {rss:.0f} MiB "
            f"exit {code}",
            flush=True,
        )


def bench_analyze(sizes: list[int], tmp: Path) -> None:
    print("analyze on synthetic torus sites (groups; target < 10 s at 100k, growth <= 4.5x):")
    times: dict[int, float] = {}
    for n in sizes:
        site = tmp / f"synth-{n}.yaml"
        site.write_text(synth(n, max(4, n // 128)), encoding="utf-8")
        wall, rss, code = run(["analyze", str(site), "-s", "groups", "--format", "json"])
        times[n] = wall
        print(
            f"  {n:>7} clients {wall:6.2f}s (inventory parse {parse_floor(site):.2f}s) "
            f"peak {rss:.0f} MiB exit {code}",
            flush=True,
        )
    if len(sizes) > 1:
        a, b = sizes[0], sizes[-1]
        print(f"  {a // 1000}k -> {b // 1000}k: x{times[b] / times[a]:.2f} (clients x{b / a:.1f})")


def bench_diff(tmp: Path) -> None:
    """Peak Python memory of reading one large lnetctl export against its size."""
    from bench_diff import _net, _routes, _routing  # the dump layout of bench_diff

    from lnetgen.plan import Route

    routes = tuple(
        Route(f"o2ib{1 + i // 10}", f"{10000 + i % 10 + 10 * (i // 1000)}@gni", 1, int(i % 10 > 0))
        for i in range(20000)
    )
    path = tmp / "nid00001.yaml"
    path.write_text(
        "net:\n" + _net("gni", "1@gni", "ipogif0", 1) + _routes(routes) + _routing(False),
        encoding="utf-8",
    )
    code = (
        "import sys, tracemalloc\n"
        "from lnetgen.live import read_live\n"
        "tracemalloc.start()\n"
        "read_live(sys.argv[1])\n"
        "print(tracemalloc.get_traced_memory()[1])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    peak = int(out.stdout.split()[-1])
    size = path.stat().st_size
    print(
        f"live reader: {size / 1e6:.1f} MB lnetctl export (20,000 routes) -> peak "
        f"{peak / 1e6:.1f} MB Python memory = {peak / size:.1f}x its size (target <= 3x)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sites", default=",".join(p.stem for p in sorted(SITES.glob("*.yaml"))))
    ap.add_argument("--sizes", default="25000,50000,100000")
    ap.add_argument("--skip", default="")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if "generate" not in skip:
            bench_generate([s for s in args.sites.split(",") if s], tmp)
        if "compare" not in skip:
            bench_compare(tmp)
        if "analyze" not in skip:
            bench_analyze([int(s) for s in args.sizes.split(",")], tmp)
        if "diff" not in skip:
            bench_diff(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
