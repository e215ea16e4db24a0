"""The links a subflow crosses between its client and its router, and inside the storage
fabric, beyond the torus (``lnetgen.throughput.share.Torus``): a fat-tree compute fabric's and
the storage fabric's links as OpenSM routes them (``lnetgen.throughput.fabric``), and a
dragonfly's local and global links; and the capacities of the hosts' storage ports and of a
leaf module's pooled uplinks, at the rates of the switch they sit on (``Site.switch_rate``).
Each function hands its resources to ``add`` (the problem under construction in
``lnetgen.throughput.predict``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from lnetgen import topology
from lnetgen.model import Site
from lnetgen.throughput.fabric import FabricRoutes
from lnetgen.throughput.workload import Ranks
from lnetgen.traffic import IntArray, PlanIndex
from lnetgen.traffic.settings import FloatArray

#: ``add(kind, labels, capacities, ids, subs)``: resources ``labels`` of ``kind``; subflow
#: ``subs[i]`` (every subflow in order when None) crosses ``ids[i]`` (-1: none).
Add = Callable[..., None]


def route_links(
    kind: str,
    key: IntArray,
    path_of: Callable[[int], Sequence[str]],
    add: Add,
    cap: Callable[[str], float],
) -> npt.NDArray[np.bool_]:
    """Subflow ``s`` crosses the links ``path_of(key[s])`` names: each distinct link one
    resource of ``kind`` at ``cap(link)``, each distinct key's path looked up once.  Returns
    which subflows cross at least one link."""
    ukey, inv = np.unique(key, return_inverse=True)
    link_id: dict[str, int] = {}
    per_key = [[link_id.setdefault(lk, len(link_id)) for lk in path_of(k)] for k in ukey.tolist()]
    crossed = np.asarray([bool(p) for p in per_key], dtype=bool)
    if link_id:
        labels = sorted(link_id, key=link_id.__getitem__)
        width = max(len(p) for p in per_key)
        table = np.full((len(per_key), width), -1, dtype=np.int64)
        for i, p in enumerate(per_key):
            table[i, : len(p)] = p
        per_sub = table[inv]  # (subflows, width)
        subs = np.repeat(np.arange(len(inv), dtype=np.int64), width)
        caps = np.asarray([cap(lab) for lab in labels], dtype=np.float64)
        add(kind, labels, caps, per_sub.reshape(-1), subs)
    return crossed[inv]


def fabric_links(
    ix: PlanIndex,
    ranks: Ranks,
    op: str,
    routes: FabricRoutes,
    sub_rank: IntArray,
    sub_router: IntArray,
    add: Add,
    cap: float,
) -> None:
    """The compute fabric's links on each subflow's route (client <-> its router), as
    ``fabric link`` resources; a route OpenSM left out adds nothing."""
    names = ix.site.clients.names
    R = len(ix.routers)

    def path_of(k: int) -> Sequence[str]:
        c, r = names[k // R], ix.routers[k % R]
        return routes.paths.get((c, r) if op == "write" else (r, c)) or ()

    key = ranks.node[sub_rank] * R + sub_router
    route_links("fabric link", key, path_of, add, lambda _link: cap)


def spine_links(
    ix: PlanIndex,
    op: str,
    routes: FabricRoutes,
    sub_router: IntArray,
    sub_srv: IntArray,
    add: Add,
    cap: Callable[[str], float],
) -> npt.NDArray[np.bool_]:
    """The storage fabric's switch-to-switch links on each subflow's route (router <-> server,
    as OpenSM routes it inside one switch), as ``spine link`` resources; returns which
    subflows have such a route (the others keep the pooled leaf uplinks).  ``cap(switch)``:
    the uplink rate of the switch a link (``"core1/L01 port 13"``) belongs to."""
    S = len(ix.servers)

    def path_of(k: int) -> Sequence[str]:
        r, s = ix.routers[k // S], ix.servers[k % S]
        path = routes.paths.get((r, s) if op == "write" else (s, r))
        # the first and last links are the hosts' own cables (router port, server port)
        return path[1:-1] if path else ()

    key = sub_router * S + sub_srv
    return route_links("spine link", key, path_of, add, lambda link: cap(link.split("/")[0]))


def dragonfly_links(
    ix: PlanIndex,
    ranks: Ranks,
    op: str,
    sub_rank: IntArray,
    sub_router: IntArray,
    add: Add,
    rate: Callable[[str], float],
) -> None:
    """The dragonfly links on each subflow's minimal route (client <-> its router): the local
    links between two switches of one group, or the global links between two groups, each
    bundle (``local_links``, ``global_links`` of them) one resource per direction.  A route
    between groups takes no local link here: the global links of a group are spread over its
    switches and adaptive routing spreads the local hops to them (not modelled)."""
    site = ix.site
    dfly = site.dragonfly
    assert dfly is not None and site.clients.switch is not None
    S, G = dfly.switches, dfly.groups
    assert ix.router_switch is not None
    c = site.clients.switch[ranks.node[sub_rank]].astype(np.int64)
    r = ix.router_switch[sub_router]
    src, dst = (c, r) if op == "write" else (r, c)
    known = (src >= 0) & (dst >= 0)
    hops = topology.dragonfly_hops(src, dst, S)
    local = known & (hops == 3)
    glob = known & (hops == topology.DRAGONFLY_GLOBAL_HOPS)

    def bundle(
        kind: str, on: npt.NDArray[np.bool_], key: IntArray, label: Callable[[int], str], links: int
    ) -> None:
        if not on.any():
            return
        used, ids = np.unique(key[on], return_inverse=True)
        full = np.full(len(key), -1, dtype=np.int64)
        full[on] = ids
        labels = [label(int(k)) for k in used.tolist()]
        add(kind, labels, np.full(len(labels), links * rate(kind)), full)

    bundle("local link", local, src * S + dst % S,
           lambda k: f"{dfly.label(k // S)}->s{k % S:02d}", dfly.local_links)  # fmt: skip
    bundle("global link", glob, (src // S) * G + dst // S,
           lambda k: f"g{k // G}->g{k % G}", dfly.global_links)  # fmt: skip


def port_caps(site: Site, names: Sequence[str]) -> FloatArray:
    """Each router's or server's storage port capacity (MB/s; ``inf`` unknown): its ports (the
    first and its Multi-Rail rails, which LNet uses together) times ``ib_link`` of the switch
    the first sits on."""
    where = {r.name: (len(r.storage_ports), r.storage_ports[0].attach) for r in site.routers}
    where.update({s.name: (len(s.ports), s.attach) for s in site.servers})
    out = np.full(len(names), np.inf)
    for i, n in enumerate(names):
        if n in where:
            ports, at = where[n]
            r = site.switch_rate("ib_link", at.switch) if at is not None else None
            out[i] = ports * r.mb_s if r is not None else np.inf
    return out


def uplink_caps(site: Site, labels: Sequence[str]) -> FloatArray:
    """Each leaf's (``switch/leaf``, or a TOR's ``switch``) uplinks pooled: their count times
    the switch's ``uplink`` rate; ``inf`` for an unknown rate or a leaf without uplinks.

    A TOR's ``uplinks`` (docs/inventory.md: "give them when the TOR is cabled to a core") are
    its uplinks, as a director leaf's are -- counted as the fabric analysis counts them
    (``lnetgen.analyze.fabric``, "busiest uplink ... (tor1)").  A leaf or TOR with no uplinks
    in the inventory has no cable for traffic to another switch: it is not given a capacity
    here (none is known), and ``problem`` reports such a crossing as not modelled
    (``_Built.unmodelled``) instead of letting it pass silently."""
    out = np.full(len(labels), np.inf)
    for i, label in enumerate(labels):
        r = site.switch_rate("uplink", label.partition("/")[0])
        n = leaf_uplinks(site, label)
        if n and r is not None:
            out[i] = n * r.mb_s
    return out


def leaf_uplinks(site: Site, label: str) -> int:
    """The uplink count of the leaf ``switch/leaf`` or of the TOR ``switch`` (whose one leaf
    is named ''); 0 for an unknown switch or leaf."""
    switch, _, leaf = label.partition("/")
    sw = site.switch(switch)
    lf = sw.leaf(leaf) if sw is not None else None
    return lf.uplinks if lf is not None else 0


def io_ports(ix: PlanIndex, op: str, sub_router: IntArray, add: Add, rate: float) -> None:
    """Each IO node's (router's) own compute-fabric port on a fat-tree client side, as a
    ``fabric link`` of ``rate`` times its compute ports (one: the inventory gives a router one
    ``client`` port): every byte a rank moves through the IO node crosses it, whatever route
    OpenSM takes to it.  Named as OpenSM's traced routes name that directed link
    (``lnetgen.fabric.trace``): a write enters the IO node from its switch port
    (``"cx1/L02 port 8"``), a read leaves through the IO node's own (``"io01 port"``), so a
    prediction with routes and one without name the same link.  Used only without routes:
    with them, the link is on every route."""
    site = ix.site
    attach = {r.name: r.client_attach for r in site.routers}
    labels = []
    for name in ix.routers:
        at = attach.get(name)
        if op == "write" and at is not None:
            labels.append(f"{at.label()} port {at.port}")
        else:
            labels.append(f"{name} port")
    add("fabric link", labels, np.full(len(labels), rate), sub_router)
