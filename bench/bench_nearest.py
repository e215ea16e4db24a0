"""Benchmark the numeric core of the nearest-neighbor strategy on a Spider-sized instance.

The instance: a 25x32x24 torus (a common description of Jaguar XT5's shape; the paper does not
give it), 192 routers on an even 4x8x6 grid, cut into 32 sets of 6 (one set per storage leaf
module; each set has one router per Z layer, spread in X and Y), and 18,688 clients filling
the other chips in linear order (X fastest).  With ``--site FILE`` (default: sites/spider.yaml
when it exists and validates) the site's client coordinates and routers, grouped by storage
leaf module, are used instead.

For every set it solves the balanced assignment (each router takes at most ceil(N/6) clients,
total hops minimal) with ``lnetgen.transport.assign`` and, on ``--reference-sets`` of them,
with networkx's min-cost flow; it checks that the optimal totals agree and prints both times.
It also times ``lnetgen.topology.link_loads`` for all client -> router flows.

    python bench/bench_nearest.py [--site FILE | --synthetic] [--reference-sets K]

(with lnetgen importable: installed, or ``PYTHONPATH=.`` from the repository root).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass

import networkx as nx
import numpy as np
import numpy.typing as npt

from lnetgen import topology, transport
from lnetgen.diagnostics import InputError
from lnetgen.inventory import load_site

IntArray = npt.NDArray[np.int64]

DEFAULT_SITE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "sites", "spider.yaml"
)


@dataclass(frozen=True)
class Instance:
    source: str
    dims: tuple[int, int, int]
    routing: str
    clients: IntArray  # (N, 3)
    routers: IntArray  # (R, 3)
    sets: list[IntArray]  # router indices per set


def synthetic() -> Instance:
    dims = (25, 32, 24)
    grid = (4, 8, 6)
    axes = [[(2 * i + 1) * dims[a] // (2 * grid[a]) for i in range(grid[a])] for a in range(3)]
    coords: list[tuple[int, int, int]] = []
    set_of: list[int] = []
    for zi, z in enumerate(axes[2]):
        for yi, y in enumerate(axes[1]):
            for xi, x in enumerate(axes[0]):
                coords.append((x, y, z))
                # a bijection of the 32 (x, y) grid cells for each Z layer, shifted per layer
                set_of.append((xi + 4 * yi + 7 * zi) % 32)
    routers = np.asarray(coords, dtype=np.int64)
    taken = np.zeros(dims[0] * dims[1] * dims[2], dtype=bool)
    taken[routers[:, 0] + dims[0] * (routers[:, 1] + dims[1] * routers[:, 2])] = True
    chip = np.nonzero(~taken)[0][:18688]
    clients = np.stack(
        [chip % dims[0], (chip // dims[0]) % dims[1], chip // (dims[0] * dims[1])], axis=1
    ).astype(np.int64)
    sets = [np.nonzero(np.asarray(set_of) == s)[0] for s in range(32)]
    return Instance(
        "synthetic 25x32x24, 192 routers in 32 sets of 6", dims, "seastar", clients, routers, sets
    )


def from_site(path: str) -> Instance | None:
    try:
        site, _ = load_site(path)
    except InputError as exc:
        print(f"{path}: does not validate, using the synthetic instance ({exc})")
        return None
    if site.torus is None:
        print(f"{path}: no torus, using the synthetic instance")
        return None
    routers = [r for r in site.routers if r.coords is not None]
    modules = sorted({r.attach.module for r in routers})
    sets = [
        np.asarray([i for i, r in enumerate(routers) if r.attach.module == m], dtype=np.int64)
        for m in modules
    ]
    coords = np.asarray([r.coords for r in routers], dtype=np.int64)
    return Instance(
        f"{path}: {len(site.clients)} clients, {len(routers)} routers in {len(sets)} leaf modules",
        site.torus.dims,
        site.torus.routing,
        np.asarray(site.clients.coords, dtype=np.int64),
        coords,
        sets,
    )


def networkx_cost(cost: IntArray, cap: IntArray) -> tuple[int, IntArray]:
    """Optimal total and assignment from networkx's network simplex (the reference)."""
    n, r = cost.shape
    g = nx.DiGraph()
    g.add_nodes_from((("c", i) for i in range(n)), demand=-1)
    g.add_node("t", demand=n)
    g.add_edges_from((("r", j), "t", {"capacity": int(cap[j]), "weight": 0}) for j in range(r))
    g.add_edges_from(
        (("c", i), ("r", j), {"capacity": 1, "weight": int(cost[i, j])})
        for i in range(n)
        for j in range(r)
    )
    flow = nx.min_cost_flow(g)
    pick = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        for (_, j), f in flow[("c", i)].items():
            if f:
                pick[i] = j
    return int(cost[np.arange(n), pick].sum()), pick


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--site",
        default=None,
        help="inventory to take coordinates from (default: sites/spider.yaml if "
        "present and valid, else the synthetic instance)",
    )
    ap.add_argument(
        "--synthetic",
        action="store_true",
        help="use the synthetic instance even when sites/spider.yaml exists",
    )
    ap.add_argument(
        "--reference-sets",
        type=int,
        default=None,
        metavar="K",
        help="run the networkx reference on the first K sets only (default: all)",
    )
    args = ap.parse_args(argv)

    inst: Instance | None = None
    path = args.site or (DEFAULT_SITE if os.path.exists(DEFAULT_SITE) else None)
    if path is not None and not args.synthetic:
        path = os.path.relpath(path)
        inst = from_site(path)
    if inst is None:
        inst = synthetic()
    nsets = len(inst.sets)
    kref = nsets if args.reference_sets is None else max(0, min(args.reference_sets, nsets))
    print(
        f"instance: {inst.source}; torus {'x'.join(map(str, inst.dims))}, "
        f"{len(inst.clients)} clients"
    )

    costs: list[IntArray] = []
    caps: list[IntArray] = []
    t0 = time.perf_counter()
    for members in inst.sets:
        costs.append(topology.torus_hops(inst.clients, inst.routers[members], inst.dims))
    t_hops = time.perf_counter() - t0
    for cost in costs:
        r = cost.shape[1]
        caps.append(np.full(r, math.ceil(len(cost) / r), dtype=np.int64))

    picks: list[IntArray] = []
    totals: list[int] = []
    times: list[float] = []
    for cost, cap in zip(costs, caps, strict=True):
        t0 = time.perf_counter()
        pick = transport.assign(cost, cap)
        times.append(time.perf_counter() - t0)
        picks.append(pick)
        totals.append(int(cost[np.arange(len(cost)), pick].sum()))
    t_assign = sum(times)
    print(f"torus_hops, {nsets} sets:              {t_hops:8.3f} s")
    print(
        f"transport.assign, {nsets} sets:        {t_assign:8.3f} s  "
        f"(max {max(times):.3f} s per set; total hops {sum(totals)})"
    )

    ok = True
    if kref:
        ref_times: list[float] = []
        for s in range(kref):
            t0 = time.perf_counter()
            ref_total, _ = networkx_cost(costs[s], caps[s])
            ref_times.append(time.perf_counter() - t0)
            if ref_total != totals[s]:
                ok = False
                print(f"set {s}: MISMATCH transport {totals[s]} vs networkx {ref_total}")
            print(
                f"  set {s:3d}: total hops {totals[s]}  transport {times[s]:.3f} s  "
                f"networkx {ref_times[-1]:.2f} s",
                file=sys.stderr,
            )
        t_ours = sum(times[:kref])
        t_ref = sum(ref_times)
        print(f"networkx min_cost_flow, {kref} sets:  {t_ref:8.3f} s")
        print(f"transport.assign on the same sets: {t_ours:8.3f} s  ratio {t_ref / t_ours:.0f}x")
        print(f"optimal totals equal on {kref} sets: {'yes' if ok else 'NO'}")

    src = np.concatenate([inst.clients] * nsets)
    dst = np.concatenate(
        [inst.routers[members][pick] for members, pick in zip(inst.sets, picks, strict=True)]
    )
    for mode in topology.ROUTING_MODES:
        t_loads = math.inf
        for _ in range(3):  # best of three
            t0 = time.perf_counter()
            loads = topology.link_loads(src, dst, inst.dims, mode)
            t_loads = min(t_loads, time.perf_counter() - t0)
        print(
            f"link_loads {mode:7s} {len(src)} flows:  {t_loads:8.3f} s  "
            f"(max {int(loads.max())} flows on a link, {int(loads.sum())} link traversals)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
