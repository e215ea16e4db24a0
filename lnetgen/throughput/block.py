"""Seed 000's block-level test of a storage fabric (s6, Fig. 9): each router streams straight to
the storage of one server -- on the same leaf module ("uncongested"), or on another module of
the same switch ("congested", the traffic crosses the director's spines).  No LNet and no
torus: what is left is the storage fabric and the storage.

Pairs (``block_pairs``): on every switch, the leaf modules that hold servers of the file system,
in name order; the routers of module *k* (name order) meet the servers of module *k* +
``shift`` (name order, modulo the modules of that switch) one to one.  ``shift`` 0 is the
uncongested test.  A top-of-rack switch is one module: on a fabric of TORs there is no
"across" inside a switch, and every shift is the uncongested test.

Resources, each at the site's rate or its switch's (``lnetgen.throughput.predict``'s kinds):
the router's and the server's ports (``ib_link``, one link per port), the server (``oss``: on
Spider the share of the DDN singlet behind it) and, when the pair sits on different modules,
either OpenSM's spine links (``storage_routes``, the simulated forwarding tables) or the
modules' pooled uplinks.
Every stream runs at its max-min fair rate; the aggregate is their sum (the test streams for a
fixed time).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.model import Site
from lnetgen.throughput.fabric import FabricRoutes
from lnetgen.throughput.links import port_caps, uplink_caps
from lnetgen.throughput.share import Problem, max_min


@dataclass(frozen=True)
class BlockTest:
    """The streams (router, server), their aggregate (MB/s; None when no known rate bounds
    it) and the resource that binds the slowest stream (kind, name)."""

    pairs: tuple[tuple[str, str], ...]
    aggregate_mb_s: float | None
    bottleneck: tuple[str, str] | None
    fabric: str  # "OpenSM routes" or "pooled uplinks"


def block_pairs(site: Site, filesystem: str, shift: int) -> list[tuple[str, str]]:
    """(router, server) streams of the test; ``InputError`` when the file system has no OSS."""
    servers: dict[tuple[str, str], list[str]] = defaultdict(list)
    for s in site.servers:
        if s.fs == filesystem and s.role == "oss":
            servers[(s.attach.switch, s.attach.leaf)].append(s.name)
    if not servers:
        msg = f"file system {filesystem!r} has no OSS"
        raise InputError([Diagnostic(site.file, 0, 0, "error", "E-WORKLOAD", "$", msg)])
    routers: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in site.routers:
        a = r.storage_ports[0].attach
        routers[(a.switch, a.leaf)].append(r.name)
    out: list[tuple[str, str]] = []
    for switch in sorted({sw for sw, _ in servers}):
        leaves = sorted(lf for sw, lf in servers if sw == switch)
        for k, leaf in enumerate(leaves):
            there = leaves[(k + shift) % len(leaves)]
            # one to one as far as the shorter list goes
            mine, theirs = sorted(routers[(switch, leaf)]), sorted(servers[(switch, there)])
            out += zip(mine, theirs, strict=False)
    return out


def block_test(
    site: Site, filesystem: str, shift: int, routes: FabricRoutes | None = None
) -> BlockTest:
    """Run the test on ``site`` (see the module docstring)."""
    pairs = block_pairs(site, filesystem, shift)
    leaf = {r.name: r.storage_ports[0].attach for r in site.routers}
    leaf.update({s.name: s.attach for s in site.servers})
    names: list[tuple[str, str]] = []
    caps: list[float] = []
    entries: list[tuple[int, int]] = []
    ids: dict[tuple[str, str], int] = {}

    def use(k: int, kind: str, name: str, cap: float) -> None:
        if (kind, name) not in ids:
            ids[(kind, name)] = len(names)
            names.append((kind, name))
            caps.append(cap)
        entries.append((ids[(kind, name)], k))

    def uplink(switch: str) -> float:
        r = site.switch_rate("uplink", switch)
        return r.mb_s if r is not None else np.inf

    oss = site.rates.oss.mb_s if site.rates.oss is not None else np.inf
    hosts = sorted({h for pair in pairs for h in pair})
    port = dict(zip(hosts, port_caps(site, hosts).tolist(), strict=True))
    for k, (r, s) in enumerate(pairs):
        use(k, "router port", r, port[r])
        use(k, "server port", s, port[s])
        use(k, "oss", s, oss)
        a, b = leaf[r], leaf[s]
        if (a.switch, a.leaf) == (b.switch, b.leaf):
            continue
        path = routes.paths.get((r, s)) if routes is not None else None
        if path:
            for lk in path[1:-1]:
                use(k, "spine link", lk, uplink(lk.split("/")[0]))
            continue
        for kind, at in (("leaf uplinks", a), ("leaf downlinks", b)):
            label = f"{at.switch}/{at.leaf}"
            use(k, kind, label, float(uplink_caps(site, [label])[0]))
    rows, cols = zip(*entries, strict=True) if entries else ((), ())
    matrix = sp.csr_matrix(
        (np.ones(len(rows)), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
        shape=(len(names), len(pairs)),
    )
    sh = max_min(Problem(len(pairs), matrix, np.asarray(caps, dtype=np.float64)))
    fabric = "OpenSM routes" if routes is not None else "pooled uplinks"
    if not len(pairs) or not np.isfinite(sh.rate).all():
        return BlockTest(tuple(pairs), None, None, fabric)
    slow = int(np.argmin(sh.rate))
    by = int(sh.frozen_by[slow])
    return BlockTest(tuple(pairs), float(sh.rate.sum()), names[by] if by >= 0 else None, fabric)
