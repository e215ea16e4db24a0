"""Routes through a fat-tree compute fabric as OpenSM sets them: the fabric simulated (ibsim)
with the inventory's recorded OpenSM settings or with none, every compute node to IO node
route (and back) followed through the forwarding tables (``lnetgen.fabric.trace``).

The throughput model turns each directed link of those routes into a resource of
``rates.fabric_link``, so two IO nodes reached through the same spine port share it -- seed
002's Wolf, where all 24 IO nodes on port 18 of their line cards drew every route through
the same spine.  Needs ``opensm`` and ``ibsim`` (``lnetgen.fabric.simulate``); each switch of
the fabric is simulated on its own, as ``fabric check`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from lnetgen.emit.opensm import fabric_files
from lnetgen.fabric.cabling import fabric_hosts, fabric_of, layout
from lnetgen.fabric.simulate import simulate
from lnetgen.fabric.trace import host_classes, host_paths
from lnetgen.model import OpenSMChoice, Site

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
    choice = fab.opensm if settings == "recorded" and fab.opensm is not None else OpenSMChoice()
    files = fabric_files(site, fab, f"lnetgen throughput ({settings})", choice, "@DIR@")
    hosts = fabric_hosts(site, fab)
    paths: dict[tuple[str, str], tuple[str, ...] | None] = {}
    for sw in fab.switches:
        part = [h for h in hosts if h.attach.switch == sw.name]
        if not part:
            continue
        lay = layout(site, replace(fab, switches=(sw,)), part)
        res = simulate(lay, files=files)
        src_kind, io_kind = host_classes(lay)
        a = [h.name for h in lay.hosts if h.kind == src_kind]
        b = [h.name for h in lay.hosts if h.kind == io_kind]
        pairs = [(x, y) for x in a for y in b] + [(y, x) for x in a for y in b]
        paths.update(host_paths(lay, res.tables, res.lids, pairs))
    return FabricRoutes(fab.name, settings, paths)
