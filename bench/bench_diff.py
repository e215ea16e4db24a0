"""Benchmark ``lnetgen diff`` on a Blue Waters-sized machine.

Writes one ``lnetctl export`` dump per host (full layout: ``lo`` and the host's nets with NID,
status, per-host statistics and tunables; every route with hop, priority, state and type;
``routing`` as the per-CPT sequence; ``buffers``; ``global``) into a temporary directory, then
times reading the dumps and comparing them with the plan:

1. against the plan the dumps were written from (expected: no difference);
2. against the plan after moving one router to a new storage IP (expected: exactly the servers
   that route back through it differ).

The site is ``sites/bluewaters.yaml`` (25,712 clients, 582 routers, 438 servers, 1,170 routes
per client) when it exists and validates, else a synthetic plan of the same shape.

    python bench/bench_diff.py [--site FILE | --synthetic] [--tmp DIR] [--keep DIR]

(with lnetgen importable: installed, or ``PYTHONPATH=.`` from the repository root).  Blue
Waters needs about 3.5 GB for the dumps.  They go to ``/dev/shm`` when it exists (memory, so
the figure measures lnetgen rather than the disk; ``--tmp`` picks another place).  Both wall
time and CPU time are printed: on a busy machine the CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time

from lnetgen import nodes
from lnetgen.diagnostics import InputError
from lnetgen.diff import diff, plan_changes
from lnetgen.inventory import load_site
from lnetgen.live import read_live
from lnetgen.model import Site
from lnetgen.plan import (
    CLIENT,
    STORAGE,
    ClientClass,
    Interface,
    Network,
    Plan,
    Route,
    RouterPlan,
    ServerPlan,
    ServerRoutes,
)
from lnetgen.solve import solve

DEFAULT_SITE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "sites", "bluewaters.yaml"
)

_STATS = """          statistics:
              send_count: {s}
              recv_count: {r}
              drop_count: {d}
"""
_TUNABLES_O2IB = """          tunables:
              peer_timeout: 180
              peer_credits: 8
              peer_buffer_credits: 0
              credits: 256
          lnd tunables:
              peercredits_hiw: 4
              map_on_demand: 0
              concurrent_sends: 8
              fmr_pool_size: 512
              fmr_flush_trigger: 384
              fmr_cache: 1
              ntx: 512
              conns_per_peer: 1
          dev cpt: 0
          CPT: "[0,1]"
"""
_TUNABLES_GNI = """          tunables:
              peer_timeout: 180
              peer_credits: 16
              peer_buffer_credits: 0
              credits: 256
          lnd tunables:
          dev cpt: 0
          CPT: "[0,1]"
"""
_LO = """net:
    - net type: lo
      local NI(s):
        - nid: 0@lo
          status: up
          statistics:
              send_count: 0
              recv_count: 0
              drop_count: 0
          tunables:
              peer_timeout: 0
              peer_credits: 0
              peer_buffer_credits: 0
              credits: 0
          lnd tunables:
          dev cpt: 0
          CPT: "[0,1]"
"""
_GLOBAL = """buffers:
    tiny: {tiny}
    small: {small}
    large: {large}
global:
    numa_range: 0
    max_interfaces: 200
    discovery: 1
    drop_asym_route: 0
    retry_count: 2
    transaction_timeout: 50
    health_sensitivity: 100
    recovery_interval: 1
    router_sensitivity: 100
    lnd_timeout: 16
    response_tracking: 3
    recovery_limit: 0
    max_recovery_ping_interval: 900
"""


def _net(net: str, nid: str, iface: str, seed: int) -> str:
    head = (
        f"    - net type: {net}\n      local NI(s):\n        - nid: {nid}\n"
        f"          status: up\n          interfaces:\n              0: {iface}\n"
    )
    stats = _STATS.format(s=1000003 * seed % 9999991, r=1000033 * seed % 9999973, d=seed % 7)
    return head + stats + (_TUNABLES_GNI if net.startswith("gni") else _TUNABLES_O2IB)


def _routes(routes: tuple[Route, ...]) -> str:
    if not routes:
        return ""
    return "route:\n" + "".join(
        f"    - net: {r.net}\n      gateway: {r.gateway}\n      hop: {r.hop}\n"
        f"      priority: {r.priority}\n      state: up\n      type: single-hop\n"
        for r in routes
    )


def _routing(enable: bool) -> str:
    out = ["routing:"]
    nb = (2048, 16384, 1024) if enable else (0, 0, 0)
    for cpt in (0, 1):
        out.append(f"    - cpt[{cpt}]:")
        for kind, npages, n in (
            ("tiny", 0, nb[0] // 2),
            ("small", 1, nb[1] // 2),
            ("large", 256, nb[2] // 2),
        ):
            out += [
                f"          {kind}:",
                f"              npages: {npages}",
                f"              nbuffers: {n}",
                f"              credits: {n}",
                f"              mincredits: {n}",
            ]
    out.append(f"    - enable: {1 if enable else 0}")
    return "\n".join(out) + "\n" + _GLOBAL.format(tiny=nb[0], small=nb[1], large=nb[2])


def write_dumps(plan: Plan, site: Site | None, out: str) -> tuple[int, int]:
    """One export dump per host; returns (files, bytes)."""
    nfiles = nbytes = 0
    nid_of = dict(zip(site.clients.names, site.clients.nids, strict=True)) if site else {}

    def put(host: str, text: str) -> None:
        nonlocal nfiles, nbytes
        data = text.encode()
        with open(os.path.join(out, f"{host}.yaml"), "wb") as fh:
            fh.write(data)
        nfiles += 1
        nbytes += len(data)

    seed = 0
    for cc in plan.client_classes:
        tail = _routes(cc.routes) + _routing(False)
        for host in nodes.expand(cc.members):
            seed += 1
            nid = nid_of.get(host) or f"{nodes.host_number(host)}@{cc.net}"
            put(host, _LO + _net(cc.net, nid, cc.interface, seed) + tail)
    for r in plan.routers:
        seed += 1
        text = _LO + "".join(_net(i.net, i.nid, i.interface, seed) for i in r.interfaces)
        put(r.name, text + _routing(True))
    routes = plan.routes_for_server()
    for s in plan.servers:
        seed += 1
        put(
            s.name,
            _LO + _net(s.net, s.nid, s.interface, seed) + _routes(routes[s.name]) + _routing(False),
        )
    return nfiles, nbytes


def synthetic_plan() -> Plan:
    """A Blue Waters-shaped plan without an inventory: 25,712 clients on gni, 144 storage nets
    of 4 routers + 3 servers each, every net with a backup group at priority 1."""
    nets, routers, servers, sroutes = [Network("gni", CLIENT)], [], [], []
    groups = 144
    croutes: list[Route] = []
    for g in range(groups):
        net = f"o2ib{1001 + g}"
        members = [g * 4 + k for k in range(4)]
        backup = [((g + 1) % groups) * 4 + k for k in range(4)]
        names = [f"oss{g * 3 + k + 1:03d}" for k in range(3)]
        nets.append(Network(net, STORAGE, tuple(names), (), (), "", "scratch", f"g{g}"))
        for k, name in enumerate(names):
            servers.append(
                ServerPlan(
                    name,
                    "oss",
                    "scratch",
                    f"10.{g // 200 + 20}.{g % 200}.{k + 100}@{net}",
                    net,
                    "ib0",
                    "",
                )
            )
        croutes += [Route(net, f"{26001 + m}@gni", 1, 0) for m in members]
        croutes += [Route(net, f"{26001 + m}@gni", 1, 1) for m in backup]
        sroutes.append(
            ServerRoutes(
                nodes.fold(names),
                net,
                tuple(
                    [Route("gni", f"10.101.{m // 250}.{m % 250 + 1}@{net}", 1, 0) for m in members]
                    + [Route("gni", f"10.101.{m // 250}.{m % 250 + 1}@{net}", 1, 1) for m in backup]
                ),
            )
        )
    for m in range(groups * 4):
        own = m // 4
        prev = (own - 1) % groups
        ifs = [Interface("gni", f"{26001 + m}@gni", "ipogif0")]
        ifs += [
            Interface(f"o2ib{1001 + g}", f"10.101.{m // 250}.{m % 250 + 1}@o2ib{1001 + g}", "ib0")
            for g in sorted({own, prev})
        ]
        routers.append(RouterPlan(f"rtr{m + 1:03d}", "", None, tuple(ifs)))
    clients = ClientClass(
        "clients-gni", "gni", "ipogif0", "nid[00001-25712]", 25712, tuple(croutes)
    )
    return Plan(
        "synthetic",
        "groups",
        "bench",
        "0" * 64,
        tuple(nets),
        tuple(routers),
        tuple(servers),
        (clients,),
        tuple(sroutes),
    )


def move_router(plan: Plan, name: str, new_ip: str) -> tuple[Plan, str]:
    """The plan after router ``name`` moves to storage IP ``new_ip`` (the routing layout stays
    the same); returns the plan and the old IP."""
    r = next(r for r in plan.routers if r.name == name)
    old_ip = r.interfaces[1].nid.split("@")[0]
    remap = {i.nid: f"{new_ip}@{i.net}" for i in r.interfaces[1:]}
    routers = tuple(
        dataclasses.replace(
            x,
            interfaces=tuple(
                dataclasses.replace(i, nid=remap.get(i.nid, i.nid)) for i in x.interfaces
            ),
        )
        if x.name == name
        else x
        for x in plan.routers
    )
    server_routes = tuple(
        dataclasses.replace(
            sr,
            routes=tuple(
                dataclasses.replace(rt, gateway=remap.get(rt.gateway, rt.gateway))
                for rt in sr.routes
            ),
        )
        for sr in plan.server_routes
    )
    return dataclasses.replace(plan, routers=routers, server_routes=server_routes), old_ip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=None, help="inventory (default: sites/bluewaters.yaml)")
    ap.add_argument("--synthetic", action="store_true", help="use the synthetic plan")
    ap.add_argument(
        "--tmp",
        default=None,
        help="parent of the temporary dump directory (default: /dev/shm if present)",
    )
    ap.add_argument("--keep", default=None, help="write the dumps here and keep them")
    args = ap.parse_args()

    site: Site | None = None
    t0 = time.perf_counter()
    if not args.synthetic:
        path = args.site or DEFAULT_SITE
        if os.path.exists(path):
            try:
                site, _warnings = load_site(path)
            except InputError as exc:
                print(f"{path}: not usable ({exc}); using the synthetic plan", file=sys.stderr)
        elif args.site:
            print(f"{path}: no such file", file=sys.stderr)
            return 2
    plan = solve(site) if site is not None else synthetic_plan()
    t_solve = time.perf_counter() - t0
    n_hosts = sum(c.count for c in plan.client_classes) + len(plan.routers) + len(plan.servers)
    routes = max(len(c.routes) for c in plan.client_classes)
    print(
        f"site {plan.site}: {n_hosts} hosts, {routes} routes per client; load+solve {t_solve:.1f} s"
    )

    parent = args.tmp or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    out = args.keep or tempfile.mkdtemp(prefix="lnetgen-bench-diff-", dir=parent)
    os.makedirs(out, exist_ok=True)
    try:
        t0 = time.perf_counter()
        nfiles, nbytes = write_dumps(plan, site, out)
        os.sync()  # no write-back competing with the timed reads
        print(
            f"wrote {nfiles} lnetctl export dumps, {nbytes / 1e9:.2f} GB, in "
            f"{time.perf_counter() - t0:.1f} s to {out}"
        )

        t0, c0 = time.perf_counter(), time.process_time()
        live = read_live(out)
        t_read, c_read = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        result = diff(plan, live, site)
        t_diff, c_diff = time.perf_counter() - t0, time.process_time() - c0
        print(
            f"unchanged plan: read {t_read:.1f} s + compare {t_diff:.1f} s = "
            f"{t_read + t_diff:.1f} s wall ({c_read + c_diff:.1f} s CPU); "
            f"{result.compared} hosts compared, {result.equal_count} equal, "
            f"exit {result.exit_code}"
        )
        if result.exit_code != 0:
            print(
                "  unexpected differences:",
                [g.hosts for g in result.groups][:5],
                result.errors[:3],
                file=sys.stderr,
            )

        moved = plan.routers[len(plan.routers) // 2].name
        changed, old_ip = move_router(plan, moved, "10.250.0.1")
        del live, result
        t0, c0 = time.perf_counter(), time.process_time()
        live = read_live(out)
        result = diff(changed, live, site)
        steps = plan_changes(result)
        t_total, c_total = time.perf_counter() - t0, time.process_time() - c0
        differ = nodes.fold(n for g in result.groups for n in nodes.expand(g.hosts))
        print(
            f"{moved} moved from {old_ip} to 10.250.0.1: read + compare + plan "
            f"{t_total:.1f} s wall ({c_total:.1f} s CPU); differ: {differ or '-'} "
            f"({len(steps)} steps); exit {result.exit_code}"
        )
        print(
            f"figure: {t_total:.1f} s wall, {c_total:.1f} s CPU for {nfiles} dumps (target < 30 s)"
        )
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
