"""What a file system needs to start: its MDS and MDT 0, its MGS, failover partners, one storage
fabric for all its servers, and the shared server net of every storage fabric.

Reads ``filesystems[].mgs``, ``servers[].failover`` and ``fabrics[].server_net`` (the MDT indices
are read with the servers).  Reports E-FS-NO-MDS, E-MDTS (no MDT 0), E-FS-MGS, E-FAILOVER,
E-FS-FABRIC and E-NET-COLLIDE / W-NET-OVERLAP for a server net.  Gives each ``FileSystem`` its
MGS and each storage ``Fabric`` its server net number.

The server net: every storage fabric whose servers a strategy splits over several storage nets
gets one more net, ``<storage_lnd><server_net>``, that every server of the fabric joins with its
storage interface and IP, so OSS, MDS and MGS reach each other directly (docs/inventory.md).
The default number is the lowest one that no storage net of any strategy, no client net and no
other fabric's server net can use.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from lnetgen import nodes
from lnetgen.inventory.context import Context
from lnetgen.inventory.messages import did_you_mean
from lnetgen.inventory.nets import ClientNets
from lnetgen.model import Fabric, FileSystem, Server, StrategyParams
from lnetgen.yamlsrc import Path


def check_lustre(
    ctx: Context,
    fss: list[FileSystem],
    servers: list[tuple[int, Server]],
) -> list[FileSystem]:
    """The file systems with their MGS resolved; reports what keeps one from starting."""
    by_name = {s.name: (i, s) for i, s in servers}
    per_fs: dict[str, list[tuple[int, Server]]] = defaultdict(list)
    for i, s in servers:
        per_fs[s.fs].append((i, s))
    out: list[FileSystem] = []
    for k, f in enumerate(fss):
        p: Path = ("filesystems", k)
        mine = per_fs.get(f.name, [])
        mds = [s for _, s in mine if s.role == "mds"]
        mgs = f.mgs
        if mine and not mds and not ctx.incomplete:
            ctx.err(
                (*p, "name"),
                "E-FS-NO-MDS",
                f"file system {f.name} has {len(mine)} server(s) but no MDS: it cannot start",
                hint="add a server with role: mds and fs: " + f.name,
            )
        elif mds and not any(0 in s.mdts for s in mds) and not ctx.incomplete:
            ctx.err(
                (*p, "name"),
                "E-MDTS",
                f"no MDS of {f.name} serves MDT 0 (the root of the namespace)",
                hint="give one MDS 'mdts: [0]'",
            )
        if mgs:
            _check_mgs(ctx, f, k, by_name, mine)
        elif mds:
            mgs = mds[0].name
        out.append(dataclasses.replace(f, mgs=mgs))
        _check_one_fabric(ctx, f, mine)
    for i, s in servers:
        if s.failover:
            _check_failover(ctx, i, s, by_name)
    return out


def _check_mgs(
    ctx: Context,
    f: FileSystem,
    k: int,
    by_name: dict[str, tuple[int, Server]],
    mine: list[tuple[int, Server]],
) -> None:
    p: Path = ("filesystems", k, "mgs")
    got = by_name.get(f.mgs)
    if got is None:
        if not ctx.incomplete:
            ctx.err(
                p,
                "E-FS-MGS",
                f"the MGS of {f.name}, {f.mgs!r}, is not a server",
                hint=did_you_mean(f.mgs, by_name),
            )
        return
    mgs = got[1]
    fabrics = {s.fabric for _, s in mine}
    if fabrics and mgs.fabric not in fabrics:
        ctx.err(
            p,
            "E-FS-MGS",
            f"the MGS of {f.name}, {mgs.name}, is on fabric {mgs.fabric} but the servers of "
            f"{f.name} are on {', '.join(sorted(fabrics))}: they could not reach it",
        )


def _check_one_fabric(ctx: Context, f: FileSystem, mine: list[tuple[int, Server]]) -> None:
    """All servers of a file system must share one storage fabric to reach each other."""
    if not mine:
        return
    first = mine[0][1]
    for i, s in mine[1:]:
        if s.fabric != first.fabric:
            ctx.err(
                ("servers", i, "attach"),
                "E-FS-FABRIC",
                f"{s.name} ({f.name}) is on fabric {s.fabric} but {first.name} of the same "
                f"file system is on {first.fabric}: servers of one file system must reach "
                "each other",
            )
            return


def _check_failover(
    ctx: Context, i: int, s: Server, by_name: dict[str, tuple[int, Server]]
) -> None:
    """The partner serves the same targets when this server fails, so clients must reach it
    exactly like the primary: same file system, same role, same leaf module (or TOR)."""
    p: Path = ("servers", i, "failover")
    got = by_name.get(s.failover)
    if got is None:
        if not ctx.incomplete:
            ctx.err(
                p,
                "E-FAILOVER",
                f"the failover partner of {s.name}, {s.failover!r}, is not a server",
                hint=did_you_mean(s.failover, by_name),
            )
        return
    partner = got[1]
    why = ""
    if partner.name == s.name:
        why = "a server cannot be its own failover partner"
    elif partner.fs != s.fs:
        why = f"{partner.name} serves {partner.fs}, not {s.fs}"
    elif partner.role != s.role:
        why = f"{partner.name} is an {partner.role.upper()}, {s.name} an {s.role.upper()}"
    elif partner.attach.module != s.attach.module:
        why = (
            f"{partner.name} is on {partner.attach.label()} and {s.name} on "
            f"{s.attach.label()}: clients reach a server through the routers of its leaf, so "
            "the partner must share the primary's leaf module to be reachable like it"
        )
    if why:
        ctx.err(p, "E-FAILOVER", f"failover partner of {s.name}: {why}")


def server_nets(
    ctx: Context,
    fabrics: tuple[Fabric, ...],
    cnets: ClientNets,
    params: StrategyParams,
    fss: list[FileSystem],
    servers: list[tuple[int, Server]],
) -> tuple[Fabric, ...]:
    """Each storage fabric with its server net number (explicit or the lowest free one)."""
    lnd = params.storage_lnd
    count: dict[str, int] = defaultdict(int)
    for _, s in servers:
        count[s.fs] += 1
    storage = [f for f in fabrics if f.role == "storage"]
    # every number a storage net of any strategy may take: per file system with a base one net
    # per server at most; the others (and baseline's one net per fabric) share the global base
    ranges: list[tuple[int, int]] = []
    shared = sum(count[f.name] for f in fss if f.net_base is None) + len(storage)
    ranges.append((params.storage_net_base, params.storage_net_base + shared - 1))
    for f in fss:
        if f.net_base is not None and count[f.name]:
            ranges.append((f.net_base, f.net_base + count[f.name] - 1))
    taken = {c.net.number for c in cnets.nets if c.net.lnd == lnd}
    explicit: dict[int, tuple[str, Path]] = {}
    raw = {f["name"]: (k, f) for k, f in enumerate(ctx.data.get("fabrics", []))}
    for fab in storage:
        k, spec = raw[fab.name]
        if "server_net" not in spec:
            continue
        n = int(spec["server_net"])
        p: Path = ("fabrics", k, "server_net")
        net = nodes.Net(lnd, n)
        if n in taken:
            ctx.err(p, "E-NET-COLLIDE", f"server net {net} of {fab.name} is also a client net")
        elif n in explicit:
            other, op = explicit[n]
            ctx.err(
                p,
                "E-NET-COLLIDE",
                f"server net {net} of {fab.name} is also the server net of {other} "
                f"(line {ctx.line(op)})",
            )
        elif any(lo <= n <= hi for lo, hi in ranges):
            lo, hi = next(r for r in ranges if r[0] <= n <= r[1])
            ctx.err(
                p,
                "E-NET-COLLIDE",
                f"server net {net} of {fab.name} lies in {nodes.Net(lnd, lo)}-"
                f"{nodes.Net(lnd, hi)}, which the storage nets may use",
                hint="choose a number outside every file system's net range",
            )
        explicit[n] = (fab.name, p)
    used = taken | set(explicit)
    out = []
    for fab in fabrics:
        if fab.role != "storage":
            out.append(fab)
            continue
        k, spec = raw[fab.name]
        if "server_net" in spec:
            number = int(spec["server_net"])
        else:
            number = _lowest_free(used, ranges)
            used.add(number)
        out.append(dataclasses.replace(fab, server_net=number))
    return tuple(out)


def _lowest_free(used: set[int], ranges: list[tuple[int, int]]) -> int:
    n = 0
    while True:
        hit = next((hi for lo, hi in ranges if lo <= n <= hi), None)
        if hit is not None:
            n = hit + 1
        elif n in used:
            n += 1
        else:
            return n
