"""Where OpenSM's routes go: the forwarding tables ``dump_fts`` prints, read back and followed hop
by hop through a layout, counted per spine and leaf uplink, and checked for health.

The two host classes of a fabric are compute nodes and IO nodes on a compute fabric, routers
and servers on a storage fabric; :func:`count_routes` counts the routes between them in both
directions, :func:`route_health` looks at all host pairs.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import networkx as nx

from lnetgen.fabric.cabling import Host, Layout

#: Longer than any route of a two-tier fabric: a route still going after this many hops loops.
_MAX_HOPS = 16

_FT_HEADER = re.compile(r"of switch .* guid (0x[0-9a-fA-F]+)")
_FT_ENTRY = re.compile(
    r"^(0x[0-9a-fA-F]+)\s+(\d+)\s*:\s*\((Channel Adapter|Switch)\s+portguid\s+"
    r"(0x[0-9a-fA-F]+)"
)


def parse_dump_fts(text: str) -> tuple[dict[int, dict[int, int]], dict[int, int]]:
    """``dump_fts`` output -> ({switch GUID: {LID: out port}}, {port GUID: LID})."""
    tables: dict[int, dict[int, int]] = {}
    lids: dict[int, int] = {}
    cur: dict[int, int] | None = None
    for line in text.splitlines():
        m = _FT_HEADER.search(line)
        if m and line.startswith("Unicast lids"):
            cur = tables.setdefault(int(m.group(1), 16), {})
            continue
        m = _FT_ENTRY.match(line.strip())
        if m and cur is not None:
            lid, port, pguid = int(m.group(1), 16), int(m.group(2)), int(m.group(4), 16)
            cur[lid] = port
            lids[pguid] = lid
    return tables, lids


@dataclass
class Direction:
    """Routes from one host class to the other."""

    routes: int = 0
    unrouted: int = 0
    spine: list[int] = field(default_factory=list)  # routes through spine k (layout order)
    uplink: dict[tuple[str, int], int] = field(default_factory=dict)  # (leaf label, port)
    worst_ratio: float = 0.0  # max over leaves of (busiest uplink / best possible)
    worst_leaf: str = ""
    worst_load: int = 0
    worst_best: int = 0


@dataclass
class Health:
    """All host-to-host routes, not just the two classes: are they there, do any turn back up
    after going down (a reverse hop), and is the channel dependency graph acyclic (no credit
    loop possible)."""

    pairs: int = 0
    unrouted: int = 0
    reverse: int = 0  # host pairs whose route goes down and then up again
    cdg_links: int = 0
    cdg_acyclic: bool = True
    cycle: tuple[str, ...] = ()


def host_classes(lay: Layout) -> tuple[str, str]:
    """(source class, IO class) of a fabric: compute/router on a compute fabric, else
    router/server."""
    kinds = {h.kind for h in lay.hosts}
    if "compute" in kinds:
        return "compute", "router"
    return "router", "server"


class _Tracer:
    """A layout's cabling and OpenSM's forwarding tables, to follow routes hop by hop."""

    def __init__(
        self, lay: Layout, tables: dict[int, dict[int, int]], lids: dict[int, int]
    ) -> None:
        self.tables = tables
        self.lids = lids
        self.links: dict[tuple[int, int], tuple[str, int]] = {}
        self.kind_of: dict[str, str] = {}
        self.guid_of: dict[str, int] = {}
        for n in lay.net.nodes:
            self.kind_of[n.id] = n.kind
            self.guid_of[n.id] = n.guid
            for lk in n.links:
                self.links[(n.guid, lk.port)] = (lk.peer, lk.peer_port)
        self.leaf_guid = {(c.switch, c.leaf): c.guid for c in lay.leaves}
        self.uplinks = {
            (c.guid, p) for c in lay.leaves for p in lay.uplinks.get((c.switch, c.leaf), ())
        }
        self.label = {c.guid: c.label for c in (*lay.leaves, *lay.spines)}

    def leaf(self, h: Host) -> int:
        """GUID of the leaf chip ``h`` is cabled to."""
        return self.leaf_guid[(h.attach.switch, h.attach.leaf)]

    def path(self, sw: int, dst: Host) -> list[tuple[int, int]] | None:
        """The switch-to-switch hops (switch GUID, out port) from switch ``sw`` to ``dst``;
        None when the tables do not lead to ``dst``.

        The last hop, from ``dst``'s leaf down its own cable, is left out: it is neither a
        spine nor an uplink, and nothing depends on it in the channel dependency graph.
        """
        dlid = self.lids.get(dst.guid)
        if dlid is None:
            return None
        hops: list[tuple[int, int]] = []
        for _ in range(_MAX_HOPS):
            port = self.tables.get(sw, {}).get(dlid)
            if port is None or (sw, port) not in self.links:
                return None
            peer, _pp = self.links[(sw, port)]
            if self.kind_of.get(peer) != "switch":
                return hops if peer == dst.node_id else None
            hops.append((sw, port))
            sw = self.guid_of[peer]
        return None


def count_routes(
    lay: Layout,
    tables: dict[int, dict[int, int]],
    lids: dict[int, int],
    pairs: frozenset[tuple[str, str]] | None = None,
) -> tuple[Direction, Direction]:
    """Trace every class-A -> class-B and B -> A route through the forwarding tables, or only
    those of ``pairs`` ((class-A host, class-B host) names, both ways): the hosts that
    exchange data, e.g. the routers and servers of one storage net of a plan.

    A leaf's best possible busiest uplink: OpenSM routes every destination from a leaf over
    one uplink, so the routes from the leaf's sources to one destination elsewhere go
    together; spread largest first over the leaf's uplinks (exact when every destination has
    as many, as with every pair: sources x ceil(destinations elsewhere / uplinks))."""
    src_kind, io_kind = host_classes(lay)
    tracer = _Tracer(lay, tables, lids)
    spine_index = {c.guid: k for k, c in enumerate(lay.spines)}
    a_hosts = [h for h in lay.hosts if h.kind == src_kind]
    b_hosts = [h for h in lay.hosts if h.kind == io_kind]

    def wanted(src: Host, dst: Host, forward: bool) -> bool:
        if pairs is None:
            return True
        return ((src.name, dst.name) if forward else (dst.name, src.name)) in pairs

    def direction(srcs: list[Host], dsts: list[Host], forward: bool) -> Direction:
        d = Direction(spine=[0] * len(lay.spines))
        up: Counter[tuple[int, int]] = Counter()
        toward: dict[int, Counter[int]] = defaultdict(Counter)  # leaf -> dst port -> routes
        for dst in dsts:
            for src in srcs:
                if src.name == dst.name or not wanted(src, dst, forward):
                    continue
                d.routes += 1
                if tracer.leaf(src) != tracer.leaf(dst):
                    toward[tracer.leaf(src)][dst.guid] += 1
                hops = tracer.path(tracer.leaf(src), dst)
                if hops is None:
                    d.unrouted += 1
                    continue
                seen_spines = set()
                for sw, out in hops:
                    if sw in spine_index and sw not in seen_spines:
                        seen_spines.add(sw)
                        d.spine[spine_index[sw]] += 1
                    if (sw, out) in tracer.uplinks:
                        up[(sw, out)] += 1
        d.uplink = {(tracer.label[g], p): n for (g, p), n in sorted(up.items())}
        # worst uplink against the best possible on each leaf
        for c in lay.leaves:
            n_up = len(lay.uplinks.get((c.switch, c.leaf), ()))
            if not n_up or not toward[c.guid]:
                continue
            best = _spread(sorted(toward[c.guid].values(), reverse=True), n_up)
            load = max((n for (g, _p), n in up.items() if g == c.guid), default=0)
            if best and load / best > d.worst_ratio:
                d.worst_ratio, d.worst_leaf = load / best, c.label
                d.worst_load, d.worst_best = load, best
        return d

    return direction(a_hosts, b_hosts, True), direction(b_hosts, a_hosts, False)


def _spread(weights: list[int], bins: int) -> int:
    """The busiest of ``bins`` after placing ``weights`` (largest first) each on the least
    loaded bin."""
    loads = [0] * bins
    for w in weights:
        k = loads.index(min(loads))
        loads[k] += w
    return max(loads)


def host_paths(
    lay: Layout,
    tables: dict[int, dict[int, int]],
    lids: dict[int, int],
    pairs: list[tuple[str, str]],
) -> dict[tuple[str, str], tuple[str, ...] | None]:
    """For (source host, destination host) names: the directed links the route crosses, as
    ``"<chip label> port <n>"`` for each switch hop and the last leaf's port down to the
    destination, with ``"<host> port"`` for the source's own cable; None when the tables do
    not lead there."""
    tracer = _Tracer(lay, tables, lids)
    by_name: dict[str, Host] = {}
    for h in lay.hosts:
        by_name.setdefault(h.name, h)  # a Multi-Rail host: its first port
    out: dict[tuple[str, str], tuple[str, ...] | None] = {}
    for a, b in pairs:
        src, dst = by_name.get(a), by_name.get(b)
        if src is None or dst is None:
            out[(a, b)] = None
            continue
        leaf = tracer.leaf(src)
        hops = tracer.path(leaf, dst)
        if hops is None:
            out[(a, b)] = None
            continue
        at = leaf  # the switch that sends it down dst's cable: dst's leaf
        if hops:
            peer, _ = tracer.links[hops[-1]]
            at = tracer.guid_of[peer]
        down = tracer.tables.get(at, {}).get(tracer.lids.get(dst.guid, -1))
        links = [f"{a} port"]
        links += [f"{tracer.label.get(sw, hex(sw))} port {p}" for sw, p in hops]
        links.append(f"{tracer.label.get(at, hex(at))} port {down}")
        out[(a, b)] = tuple(links)
    return out


def route_health(lay: Layout, tables: dict[int, dict[int, int]], lids: dict[int, int]) -> Health:
    """Trace every (leaf, destination host) path; see :class:`Health`.

    Hosts on one leaf share every switch-to-switch link of their paths, so one trace per leaf
    and destination covers all host pairs; a host's own cable cannot close a dependency cycle
    (nothing depends on it before it), so the channel dependency graph is built over the
    switch-to-switch links only.
    """
    tracer = _Tracer(lay, tables, lids)
    spines = {c.guid for c in lay.spines}
    on_leaf = Counter(tracer.leaf(h) for h in lay.hosts)
    cdg = nx.DiGraph()
    out = Health()
    for dst in lay.hosts:
        dst_leaf = tracer.leaf(dst)
        for leaf in sorted(on_leaf):
            n_src = on_leaf[leaf] - (1 if leaf == dst_leaf else 0)
            if n_src <= 0:
                continue
            out.pairs += n_src
            hops = tracer.path(leaf, dst)
            if hops is None:
                out.unrouted += n_src
                continue
            went_down = False
            for hop in hops:
                if hop[0] in spines:
                    went_down = True
                elif hop in tracer.uplinks and went_down:
                    out.reverse += n_src
                    break
            cdg.add_edges_from(itertools.pairwise(hops))
    out.cdg_links = cdg.number_of_nodes()
    try:
        cycle = nx.find_cycle(cdg)
    except nx.NetworkXNoCycle:
        return out
    out.cdg_acyclic = False
    out.cycle = tuple(f"{tracer.label.get(a[0], hex(a[0]))}:{a[1]}" for a, _b in cycle)
    return out
