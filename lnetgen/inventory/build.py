"""Meaning checks section by section, then the frozen ``Site`` they add up to.

Sections are read in dependency order (fabrics before anything attached to them, client nets
before the routers and clients on them); checks that span sections (duplicates, GUID ranges, net
numbers, leaf placement) run once every section is read.  The ``Site`` exists only when nothing
reported an error.
"""

from __future__ import annotations

import numpy as np

from lnetgen.diagnostics import errors
from lnetgen.inventory.addresses import check_client_ipv6, check_ipv6
from lnetgen.inventory.clients import ClientGroups, check_clients
from lnetgen.inventory.context import Context
from lnetgen.inventory.dragonfly import dragonfly_places
from lnetgen.inventory.fabrics import Fabrics, check_fabrics
from lnetgen.inventory.fattree import fat_tree_places
from lnetgen.inventory.filesystems import check_filesystems, check_served
from lnetgen.inventory.guids import check_guid_ranges, check_node_guids
from lnetgen.inventory.leaves import check_compute_leaves, check_storage_leaves
from lnetgen.inventory.lustre import check_lustre, server_nets
from lnetgen.inventory.nets import (
    ClientNets,
    check_client_net_use,
    check_client_nets,
    check_storage_nets,
)
from lnetgen.inventory.rates import check_rates
from lnetgen.inventory.release import check_release
from lnetgen.inventory.routers import check_routers
from lnetgen.inventory.servers import check_servers
from lnetgen.inventory.strategy import check_strategy
from lnetgen.inventory.text import check_text
from lnetgen.inventory.topology import Topology, check_size, check_slots, read_topology
from lnetgen.inventory.torus import torus_coords
from lnetgen.inventory.tunables import check_tunables
from lnetgen.model import Clients, Router, Site


def build_site(ctx: Context) -> Site | None:
    """Check every section into ``ctx.diags``; the ``Site`` when there is no error."""
    d = ctx.data
    fabrics = check_fabrics(ctx)
    fss = check_filesystems(ctx)
    params = check_strategy(ctx)
    cnets = check_client_nets(ctx)
    topo = read_topology(d)
    sized = check_size(ctx, topo)
    check_slots(ctx, topo)
    routers = check_routers(ctx, fabrics, cnets, topo)
    servers = check_servers(ctx, fabrics, {f.name for f in fss})
    groups = check_clients(ctx, cnets)
    clients = None
    if groups.complete and sized:
        clients = _place_clients(ctx, groups, cnets, fabrics, topo, [r for _, r in routers.routers])

    # uniqueness, reported once everything has claimed its values
    ctx.names.report(ctx)
    ctx.nids.report(ctx)
    ctx.ips.report(ctx)
    ctx.ports.report(ctx, show=lambda a: f"{a.label()}:{a.port}")
    guid_owner = ctx.guids.report(ctx, show=lambda g: f"0x{g:016x}")
    check_guid_ranges(ctx, groups.guid_ranges, groups.names, guid_owner)
    check_node_guids(ctx, groups.guid_ranges)

    check_storage_nets(ctx, cnets, params, fss, servers)
    check_client_net_use(ctx, cnets, routers.nets, groups.per_net, groups.complete)
    check_served(ctx, fss, servers)
    fss = check_lustre(ctx, fss, servers)
    storage_fabrics = server_nets(ctx, fabrics.fabrics, cnets, params, fss, servers)
    if not ctx.incomplete:
        check_storage_leaves(ctx, servers, routers.modules)
    check_compute_leaves(ctx, routers.routers, fabrics.switches)

    o2ib = params.storage_lnd == "o2ib" or any(n.net.lnd == "o2ib" for n in cnets.nets)
    client_lnds = {n.net.lnd for n in cnets.nets}
    lnds = {
        "client": client_lnds,
        "router": {n.lnd for n in routers.nets} | {params.storage_lnd},
        "server": {params.storage_lnd},
    }
    lustre = check_release(ctx)
    tunables = check_tunables(ctx, o2ib, lnds, lustre)
    check_ipv6(ctx, params.storage_lnd, lustre)
    check_client_ipv6(ctx, lustre)
    rates = check_rates(ctx, topo.torus is not None, topo.dragonfly is not None)
    check_text(ctx)

    if errors(ctx.diags) or clients is None:
        return None
    return Site(
        name=d["site"],
        description=d.get("description", ""),
        file=ctx.src.file,
        digest=ctx.digest.hexdigest(),
        client_nets=cnets.nets,
        clients=clients,
        torus=topo.torus,
        client_fabric=topo.fat_tree or "",
        fabrics=storage_fabrics,
        routers=tuple(r for _, r in routers.routers),
        servers=tuple(s for _, s in servers),
        filesystems=tuple(fss),
        strategy=params,
        tunables=tunables,
        lustre=lustre,
        rates=rates,
        dragonfly=topo.dragonfly,
    )


def _place_clients(
    ctx: Context,
    groups: ClientGroups,
    cnets: ClientNets,
    fabrics: Fabrics,
    topo: Topology,
    routers: list[Router],
) -> Clients | None:
    """The clients with their torus positions, fat-tree ports or dragonfly switches (None:
    reported why not)."""
    n = len(groups.names)
    coords = np.full((n, 3), -1, dtype=np.int32)
    leaf = np.full(n, -1, dtype=np.int32)
    ports = np.zeros(n, dtype=np.int32)
    leaves: tuple[tuple[str, str], ...] = ()
    switch = None
    if topo.dragonfly is not None:
        switch = dragonfly_places(ctx, topo.dragonfly, groups.names, routers)
        if switch is None:
            return None
    elif topo.torus is not None:
        got = torus_coords(ctx, topo.torus, groups.names, routers)
        if got is None:
            return None
        coords = got
    elif topo.fat_tree is not None:
        places = fat_tree_places(ctx, fabrics, topo.fat_tree, groups.names)
        if places is None:
            return None
        leaf, leaves, ports = places.leaf, places.leaves, places.ports
    return Clients(
        tuple(groups.names),
        tuple(groups.nids),
        np.asarray(groups.net_index, dtype=np.int32),
        tuple(c.net for c in cnets.nets),
        tuple(c.interface for c in cnets.nets),
        tuple(groups.groups),
        coords,
        leaf,
        leaves,
        tuple(groups.guids),
        ports,
        np.asarray(groups.iface_index, dtype=np.int32),
        tuple(groups.iface_names),
        switch,
    )
