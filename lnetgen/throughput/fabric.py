"""Routes through an InfiniBand fabric as OpenSM sets them: the fabric simulated (ibsim)
with the inventory's recorded OpenSM settings or with none, every route between the hosts
that exchange file data (and back) followed through the forwarding tables
(``lnetgen.fabric.trace``).

- A fat-tree **compute fabric** (``simulated_routes``): compute node <-> IO node.  The
  throughput model turns each directed link of those routes into a resource of
  ``rates.fabric_link``, so two IO nodes reached through the same spine port share it -- seed
  002's Wolf, where all 24 IO nodes on port 18 of their line cards drew every route through
  the same spine.
- The **storage fabric** (``storage_routes``): router <-> server.  Each switch-to-switch link
  of a route (a leaf module's uplink to one spine, the spine's link down to the destination
  leaf) becomes a resource of ``rates.uplink``, in place of the leaf's pooled uplinks: two
  servers that OpenSM reaches through the same spine share that one link however many idle
  uplinks the leaf has.  A router and a server on different switches have no route here (each
  switch is simulated on its own; the core between switches is not in the inventory), and
  keep the pooled model.

Needs ``opensm`` and ``ibsim`` (``lnetgen.fabric.simulate``); each switch of a fabric is
simulated on its own, as ``fabric check`` does.  A Multi-Rail host's routes are its first
port's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from lnetgen.emit.opensm import fabric_files
from lnetgen.fabric.cabling import fabric_hosts, fabric_of, layout
from lnetgen.fabric.simulate import simulate
from lnetgen.fabric.trace import host_classes, host_paths
from lnetgen.model import Fabric, OpenSMChoice, Site

#: Which OpenSM settings the simulation runs with.
SETTINGS = ("recorded", "none")


@dataclass(frozen=True)
class FabricRoutes:
    """(from host, to host) -> the directed links of its route (None: OpenSM left it
    unrouted); ``settings`` says which OpenSM settings made them."""

    fabric: str
    settings: str
    paths: Mapping[tuple[str, str], tuple[str, ...] | None]


def simulated_routes(site: Site, settings: str = "recorded") -> FabricRoutes:
    """Simulate the site's compute fabric and follow every compute <-> IO node route.

    ``settings`` "recorded": the inventory's ``fabrics[].opensm`` (what ``generate`` writes;
    none recorded means none), "none": plain ftree.  Raises ``SimError`` when OpenSM or ibsim
    is missing or fails, ``InputError`` when the site has no compute fabric."""
    fab = fabric_of(site, site.client_fabric)
    return FabricRoutes(fab.name, settings, _routes(site, fab, settings))


def storage_routes(site: Site, settings: str = "recorded") -> FabricRoutes | None:
    """Simulate every storage fabric of the site and follow every router <-> server route on
    each director (``settings`` as for ``simulated_routes``); None when the site has no
    storage fabric.  A top-of-rack switch is not simulated: a route inside it crosses no
    switch-to-switch link, which is all the model takes from these routes.  Raises
    ``SimError`` when OpenSM or ibsim is missing or fails."""
    fabs = [f for f in site.fabrics if f.role == "storage"]
    if not fabs:
        return None
    paths: dict[tuple[str, str], tuple[str, ...] | None] = {}
    for fab in fabs:
        paths.update(_routes(site, fab, settings, directors_only=True))
    return FabricRoutes(", ".join(f.name for f in fabs), settings, paths)


def _routes(
    site: Site, fab: Fabric, settings: str, directors_only: bool = False
) -> dict[tuple[str, str], tuple[str, ...] | None]:
    """Every source <-> IO host route of ``fab`` (``host_classes``), switch by switch (only
    its directors with ``directors_only``)."""
    choice = fab.opensm if settings == "recorded" and fab.opensm is not None else OpenSMChoice()
    files = fabric_files(site, fab, f"lnetgen throughput ({settings})", choice, "@DIR@")
    hosts = fabric_hosts(site, fab)
    paths: dict[tuple[str, str], tuple[str, ...] | None] = {}
    for sw in fab.switches:
        part = [h for h in hosts if h.attach.switch == sw.name]
        if not part or (directors_only and sw.kind != "director"):
            continue
        lay = layout(site, replace(fab, switches=(sw,)), part)
        res = simulate(lay, files=files)
        src_kind, io_kind = host_classes(lay)
        a = sorted({h.name for h in lay.hosts if h.kind == src_kind})
        b = sorted({h.name for h in lay.hosts if h.kind == io_kind})
        pairs = [(x, y) for x in a for y in b] + [(y, x) for x in a for y in b]
        paths.update(host_paths(lay, res.tables, res.lids, pairs))
    return paths
