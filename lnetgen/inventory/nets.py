"""The ``client_nets`` section, and the LNet numbering checks across the whole site.

Reads ``client_nets[]`` (``name``, ``interface``).  Reports E-NET-LND, E-NET-RANGE and E-DUP-NET
for the list itself; once routers, servers and clients are read, E-NET-COLLIDE and W-NET-OVERLAP
where storage net numbers (``strategy.storage_net_base``, ``filesystems[].net_base``) meet client
nets or each other, E-CLIENT-NET for clients no router serves and W-NET-UNUSED for an idle net.
Adds ``Site.client_nets``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from lnetgen import nodes
from lnetgen.inventory.context import Context
from lnetgen.inventory.lnet import read_net
from lnetgen.model import ClientNet, FileSystem, Server, StrategyParams
from lnetgen.yamlsrc import Path


@dataclass(frozen=True)
class ClientNets:
    nets: tuple[ClientNet, ...]
    index: dict[nodes.Net, int]  # where in client_nets each net is listed
    #: every listed name parsed; when one did not, a net others name may be that one, and
    #: reporting them too would pile on the same mistake
    whole: bool

    def path(self, net: nodes.Net) -> Path:
        return ("client_nets", self.index[net], "name")


def check_client_nets(ctx: Context) -> ClientNets:
    cnets: list[ClientNet] = []
    first: dict[nodes.Net, int] = {}
    whole = True
    for i, cn in enumerate(ctx.data["client_nets"]):
        p: Path = ("client_nets", i, "name")
        net = read_net(ctx, cn["name"], p)
        if net is None:
            whole = False
            continue
        if net in first:
            ctx.err(
                p,
                "E-DUP-NET",
                f"client net {cn['name']!r} is {net}, already listed at line "
                f"{ctx.line(('client_nets', first[net], 'name'))}",
                hint="o2ib and o2ib0 name the same net",
            )
            continue
        first[net] = i
        cnets.append(ClientNet(net, cn.get("interface", "")))
    return ClientNets(tuple(cnets), first, whole)


def check_storage_nets(
    ctx: Context,
    cnets: ClientNets,
    params: StrategyParams,
    fss: list[FileSystem],
    servers: list[tuple[int, Server]],
) -> None:
    """Storage nets are ``<storage_lnd><base + k>``: keep them off client nets and each other.

    A file system with ``net_base`` b numbers its nets b, b+1, ... (at most one per server);
    the others share ``strategy.storage_net_base``.  A collision at the first number is
    certain (error); one further up depends on how many nets the strategy makes (warning).
    """
    lnd = params.storage_lnd
    per_fs = Counter(s.fs for _, s in servers)
    ranges: list[tuple[int, int, str, Path]] = []  # first, last, owner, path
    shared = sum(per_fs[f.name] for f in fss if f.net_base is None)
    if shared:
        base = params.storage_net_base
        st_path: Path = (
            ("strategy", "storage_net_base")
            if "storage_net_base" in ctx.data.get("strategy", {})
            else ("filesystems",)
        )
        owners = ", ".join(f.name for f in fss if f.net_base is None and per_fs[f.name])
        ranges.append((base, base + shared - 1, f"storage nets of {owners}", st_path))
    for i, f in enumerate(fss):
        if f.net_base is not None and per_fs[f.name]:
            ranges.append(
                (
                    f.net_base,
                    f.net_base + per_fs[f.name] - 1,
                    f"storage nets of {f.name}",
                    ("filesystems", i, "net_base"),
                )
            )
    for _first, last, owner, path in ranges:
        if last > nodes.MAX_NET_NUMBER:
            ctx.warn(
                path,
                "W-NET-OVERLAP",
                f"{owner} may need numbers up to {lnd}{last}, past "
                f"{nodes.MAX_NET_NUMBER} (the solver refuses that)",
                hint="lower the base",
            )
    for c in cnets.nets:
        if c.net.lnd != lnd:
            continue
        for first, last, owner, path in ranges:
            if c.net.number == first:
                ctx.err(
                    path,
                    "E-NET-COLLIDE",
                    f"{owner} start at {c.net}, which is client net {c.net} (line "
                    f"{ctx.line(cnets.path(c.net))})",
                    hint="move the base off the client net",
                )
            elif first < c.net.number <= last:
                ctx.warn(
                    path,
                    "W-NET-OVERLAP",
                    f"{owner} may run from {lnd}{first} up to {lnd}{last}, over client "
                    f"net {c.net} (line {ctx.line(cnets.path(c.net))})",
                )
    ordered = sorted(ranges, key=lambda r: ctx.src.where(r[3]))
    for k, (f1, l1, o1, p1) in enumerate(ordered):
        for f2, l2, o2, p2 in ordered[k + 1 :]:
            if f1 == f2:
                ctx.err(
                    p2,
                    "E-NET-COLLIDE",
                    f"{o2} and {o1} (line {ctx.line(p1)}) both start at {lnd}{f2}",
                )
            elif f2 <= l1 and f1 <= l2:
                ctx.warn(
                    p2,
                    "W-NET-OVERLAP",
                    f"{o2} ({lnd}{f2}-{lnd}{l2} at most) may overlap {o1} "
                    f"({lnd}{f1}-{lnd}{l1} at most, line {ctx.line(p1)})",
                )


def check_client_net_use(
    ctx: Context,
    cnets: ClientNets,
    router_nets: set[nodes.Net],
    clients_per_net: Counter[nodes.Net],
    clients_complete: bool,
) -> None:
    """Every client net needs a way out, and every listed net should be used."""
    routers_whole = ctx.whole("routers")
    for c in cnets.nets:
        if c.net in router_nets:
            continue
        count = clients_per_net[c.net]
        if count and routers_whole:
            ctx.err(
                cnets.path(c.net),
                "E-CLIENT-NET",
                f"{count} client(s) are on {c.net}, but no router has an "
                f"interface on it: they cannot reach the servers",
            )
        elif not count and routers_whole and clients_complete:
            ctx.warn(
                cnets.path(c.net),
                "W-NET-UNUSED",
                f"client net {c.net} has no clients and no routers",
            )
