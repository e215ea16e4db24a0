"""One fabric of a site at port level: the inventory's switches turned into switch chips, its
host attachments into one-port CAs, and the cabling between them as an :class:`IbNet`.

:func:`layout` makes every leaf module and every spine of a director its own switch node
(OpenSM sees chips, not chassis), cables leaf uplinks round-robin to the spines, and makes every
host port the inventory attaches to the fabric a one-port CA.

GUIDs.  Switch node GUIDs and CA port GUIDs are the inventory's; where the inventory has none
(a leaf without ``guid``, spines without ``spine_guids``, a host without a port GUID) a stable
GUID is derived from the names (locally administered, first byte 0x02) and the layout says so.
A CA's node GUID is its port GUID minus one, as on most HCAs and as ibsim numbers them.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.fabric.graph import IbLink, IbNet, IbNode, guid_int, guid_str, node_id
from lnetgen.fabric.speeds import LinkSpeeds, link_speeds
from lnetgen.model import MAX_SWITCH_PORTS, Attachment, Fabric, Leaf, Site, Switch


def _derived_guid(tag: str, used: set[int]) -> int:
    """A stable, locally administered GUID for an unnamed chip or port (first byte 0x02)."""
    n = 0
    while True:
        digest = hashlib.sha256(f"lnetgen:{tag}:{n}".encode()).digest()
        g = (0x02 << 56) | int.from_bytes(digest[:7], "big")
        if g not in used and g - 1 not in used and g + 1 not in used:
            used.add(g)
            return g
        n += 1


@dataclass(frozen=True)
class Host:
    """A host port on one fabric.  ``kind``: compute, router or server."""

    name: str
    kind: str
    interface: str
    guid: int
    attach: Attachment
    derived_guid: bool = False

    @property
    def desc(self) -> str:
        return f"{self.name} {self.interface}"

    @property
    def node_id(self) -> str:
        """The id of the host's CA node in the net (node GUID = port GUID - 1)."""
        return node_id("ca", self.guid - 1)


@dataclass(frozen=True)
class Chip:
    """A switch chip of the inventory: a leaf module (``spine`` -1) or spine ``spine``."""

    switch: str
    leaf: str
    spine: int
    guid: int
    ports: int
    derived_guid: bool = False

    @property
    def label(self) -> str:
        if self.spine >= 0:
            return f"{self.switch}/S{self.spine + 1:02d}"
        return f"{self.switch}/{self.leaf}" if self.leaf else self.switch

    @property
    def desc(self) -> str:
        if self.spine >= 0:
            return f"{self.switch} Spine S{self.spine + 1:02d}"
        return f"{self.switch} Leaf {self.leaf}" if self.leaf else self.switch


@dataclass(frozen=True)
class Layout:
    """One fabric of a site at port level: chips, hosts and the ``IbNet`` that joins them.

    ``uplinks[(switch, leaf)]`` lists a leaf's uplink ports in order; uplink ``u`` goes to
    spine ``u mod spines``.
    """

    site: str
    fabric: Fabric
    leaves: tuple[Chip, ...]
    spines: tuple[Chip, ...]
    hosts: tuple[Host, ...]
    net: IbNet
    uplinks: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)
    #: the width/speed label of host and switch links in the net file (from the site's rates)
    speeds: LinkSpeeds = field(default_factory=LinkSpeeds)

    def derived(self) -> list[str]:
        """What had no GUID in the inventory (labels), for a note in the output."""
        out = [c.label for c in (*self.leaves, *self.spines) if c.derived_guid]
        out += [h.name for h in self.hosts if h.derived_guid]
        return out


def fabric_of(site: Site, name: str | None = None) -> Fabric:
    """The named fabric; by default the compute fabric (an IB client side), else the first
    storage fabric.  Raises ``InputError`` for an unknown name."""
    if name:
        for f in site.fabrics:
            if f.name == name:
                return f
        known = ", ".join(f.name for f in site.fabrics)
        raise _fail(site, f"site {site.name} has no fabric {name!r} (known: {known})")
    for f in site.fabrics:
        if f.name == site.client_fabric:
            return f
    return next((f for f in site.fabrics if f.role == "storage"), site.fabrics[0])


def client_ports(site: Site) -> list[int]:
    """The leaf port of every fat-tree client, in client order (as the inventory assigned
    them: ``first_port`` onwards, in node-set order)."""
    ports = site.clients.ports
    if ports is None or len(ports) != len(site.clients):
        return [0] * len(site.clients)
    return [int(p) for p in ports]


def fabric_hosts(site: Site, fabric: Fabric) -> list[Host]:
    """Every host port the inventory cables to ``fabric`` (GUIDs not yet derived: 0); a
    Multi-Rail router or server has one per rail, each its own HCA (CA node)."""
    switches = {sw.name for sw in fabric.switches}
    out: list[Host] = []
    c = site.clients
    if fabric.name == site.client_fabric and len(c):
        ports = client_ports(site)
        for i, name in enumerate(c.names):
            k = int(c.leaf[i])
            if k < 0:
                continue
            sw, leaf = c.leaves[k]
            iface = c.interfaces[int(c.net_index[i])] if c.interfaces else "ib0"
            guid = _guid_or_0(c.guids[i] if c.guids else "")
            out.append(Host(name, "compute", iface, guid, Attachment(sw, leaf, ports[i])))
    for r in site.routers:
        sides = (
            (r.client_attach, r.client_interface, r.client_guid),
            *((x.attach, x.interface, x.guid) for x in r.storage_ports),
        )
        for attach, iface, guid_text in sides:
            if attach is not None and attach.switch in switches:
                out.append(Host(r.name, "router", iface, _guid_or_0(guid_text), attach))
    for s in site.servers:
        for x in s.ports:
            if x.attach.switch in switches:
                out.append(Host(s.name, "server", x.interface, _guid_or_0(x.guid), x.attach))
    return out


def _guid_or_0(text: str) -> int:
    """An inventory GUID, 0 when it has none (derived later)."""
    return guid_int(text) if text else 0


def chip_guid(sw: Switch, lf: Leaf) -> str:
    """The inventory's GUID of a leaf chip: the leaf module's, or a TOR's own (one chip)."""
    return lf.guid or (sw.guid if sw.kind == "tor" else "")


def leaf_tag(fab: Fabric, sw: Switch, lf: Leaf) -> str:
    """What a leaf chip's GUID is derived from when the inventory gives none."""
    return f"{fab.name}/{sw.name}/leaf/{lf.name}"


def spine_tag(fab: Fabric, sw: Switch, k: int) -> str:
    """What spine ``k``'s GUID is derived from when ``spine_guids`` does not list it."""
    return f"{fab.name}/{sw.name}/spine/{k}"


def host_tag(fab: Fabric, h: Host) -> str:
    """What a host port's GUID is derived from when the inventory gives none."""
    return f"{fab.name}/host/{h.name}/{h.interface}"


def _fail(site: Site, msg: str) -> InputError:
    return InputError([Diagnostic(site.file, 0, 0, "error", "E-FABRIC", "$.fabrics", msg)])


def layout(
    site: Site, fabric: Fabric | str | None = None, hosts: Sequence[Host] | None = None
) -> Layout:
    """The port-level layout of one fabric (see the module docstring for numbering).

    ``hosts`` replaces the inventory's host attachments (e.g. after a port plan).  Raises
    ``InputError`` when GUIDs collide or a chip would need more than 254 ports.
    """
    fab = fabric if isinstance(fabric, Fabric) else fabric_of(site, fabric)
    hs = list(hosts) if hosts is not None else fabric_hosts(site, fab)
    used: set[int] = set()
    for sw in fab.switches:
        used.update(
            guid_int(g) for g in (*sw.spine_guids, *(chip_guid(sw, lf) for lf in sw.leaves)) if g
        )
    used.update(h.guid for h in hs if h.guid)
    leaves: list[Chip] = []
    spines: list[Chip] = []
    for sw in fab.switches:
        for lf in sw.leaves:
            nports = lf.ports + (lf.uplinks if sw.spines else 0)
            if nports > MAX_SWITCH_PORTS:
                raise _fail(site, f"{sw.name}/{lf.name} would need {nports} ports")
            own = chip_guid(sw, lf)
            derived = not own
            g = _derived_guid(leaf_tag(fab, sw, lf), used) if derived else guid_int(own)
            leaves.append(Chip(sw.name, lf.name, -1, g, nports, derived))
        for k in range(sw.spines):
            derived = k >= len(sw.spine_guids)
            g = (
                _derived_guid(spine_tag(fab, sw, k), used)
                if derived
                else guid_int(sw.spine_guids[k])
            )
            nports = sum(
                lf.uplinks // sw.spines + (1 if k < lf.uplinks % sw.spines else 0)
                for lf in sw.leaves
            )
            if nports > MAX_SWITCH_PORTS:
                raise _fail(site, f"spine {k + 1} of {sw.name} would need {nports} ports")
            spines.append(Chip(sw.name, "", k, g, max(nports, 1), derived))
    fixed: list[Host] = []
    for h in sorted(hs, key=lambda h: (h.attach, h.name)):
        if not h.guid:
            h = replace(
                h,
                guid=_derived_guid(host_tag(fab, h), used),
                derived_guid=True,
            )
        fixed.append(h)
    _check_unique(site, leaves, spines, fixed)
    return _build(site, fab, leaves, spines, fixed)


def _check_unique(site: Site, leaves: list[Chip], spines: list[Chip], hosts: list[Host]) -> None:
    """Node GUIDs must be unique among nodes and port GUIDs among ports (a switch's port GUID
    is its node GUID); the two name spaces are separate, as in OpenSM."""
    chips = [(c.label, c.guid) for c in (*leaves, *spines)]
    for space in (
        chips + [(f"{h.name} port", h.guid) for h in hosts],
        chips + [(f"{h.name} node (port GUID - 1)", h.guid - 1) for h in hosts],
    ):
        owner: dict[int, str] = {}
        for what, g in space:
            if g <= 0 or g >= 1 << 64:
                raise _fail(site, f"{what}: GUID {guid_str(g % (1 << 64))} is not usable")
            if g in owner:
                raise _fail(
                    site,
                    f"GUID {guid_str(g)} of {what} is also the GUID of "
                    f"{owner[g]}; OpenSM needs unique node and port GUIDs",
                )
            owner[g] = what


def _build(
    site: Site, fab: Fabric, leaves: list[Chip], spines: list[Chip], hosts: list[Host]
) -> Layout:
    links: dict[int, list[IbLink]] = defaultdict(list)
    leaf_chip = {(c.switch, c.leaf): c for c in leaves}
    spine_chips: dict[str, list[Chip]] = defaultdict(list)
    for c in spines:
        spine_chips[c.switch].append(c)
    uplinks: dict[tuple[str, str], tuple[int, ...]] = {}
    for sw in fab.switches:
        next_port = [1] * sw.spines
        for lf in sw.leaves:
            chip = leaf_chip[(sw.name, lf.name)]
            ups: list[int] = []
            if sw.spines:
                for u in range(lf.uplinks):
                    sp = spine_chips[sw.name][u % sw.spines]
                    port, sport = lf.ports + u + 1, next_port[u % sw.spines]
                    next_port[u % sw.spines] += 1
                    links[chip.guid].append(IbLink(port, node_id("switch", sp.guid), sport))
                    links[sp.guid].append(IbLink(sport, node_id("switch", chip.guid), port))
                    ups.append(port)
            uplinks[(sw.name, lf.name)] = tuple(ups)
    ca_nodes: list[IbNode] = []
    for h in hosts:
        leaf = leaf_chip.get((h.attach.switch, h.attach.leaf))
        if leaf is None:
            raise _fail(
                site, f"{h.name} is attached to {h.attach.label()}, not a leaf of fabric {fab.name}"
            )
        links[leaf.guid].append(IbLink(h.attach.port, h.node_id, 1))
        ca_nodes.append(
            IbNode(
                "ca",
                h.guid - 1,
                1,
                h.desc,
                (IbLink(1, node_id("switch", leaf.guid), h.attach.port),),
                ((1, h.guid),),
            )
        )
    sysimg = {sw.name: _guid_or_0(sw.guid) for sw in fab.switches}
    sw_nodes = [
        IbNode(
            "switch",
            c.guid,
            c.ports,
            c.desc,
            tuple(sorted(links[c.guid], key=lambda lk: lk.port)),
            (),
            sysimg.get(c.switch, 0) if fab_kind(fab, c.switch) == "director" else 0,
        )
        for c in (*leaves, *spines)
    ]
    for n in sw_nodes:
        seen = Counter(lk.port for lk in n.links)
        dup = [p for p, k in seen.items() if k > 1]
        if dup:
            raise _fail(site, f"port {dup[0]} of {n.desc} is cabled twice")
    return Layout(
        site.name,
        fab,
        tuple(leaves),
        tuple(spines),
        tuple(hosts),
        IbNet((*sw_nodes, *ca_nodes)),
        uplinks,
        link_speeds(site, fab),
    )


def fab_kind(fab: Fabric, switch: str) -> str:
    """The kind of switch ``switch`` of ``fab`` ('' when it has none of that name)."""
    for sw in fab.switches:
        if sw.name == switch:
            return sw.kind
    return ""
