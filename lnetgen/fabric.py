"""InfiniBand fabrics as port-level graphs: built from an inventory, written as an ibsim net file,
read back from ``ibnetdiscover`` output, and checked for IO-node placement.

One model serves all directions: an :class:`IbNet` is a list of nodes (switch chips and channel
adapters) with their GUIDs, node descriptions and cabled ports, the same things
``ibnetdiscover`` prints.

* :func:`layout` turns one fabric of a ``Site`` into an ``IbNet``: every leaf module and every
  spine of a director becomes its own switch node (OpenSM sees chips, not chassis), leaf uplinks
  are cabled round-robin to the spines, and every host port the inventory attaches to the
  fabric becomes a one-port CA.  :func:`render_net` writes it in ibnetdiscover syntax, which
  ``ibsim`` loads as a net file.
* :func:`parse_ibnetdiscover` reads real ``ibnetdiscover`` output; :func:`infer_fabric` finds
  leaves and spines in it with networkx and returns the inventory's ``fabrics`` entry plus the
  host attachments.
* :func:`io_port_findings` and :func:`plan_ports` are the LANL Wolf lesson (seed 002): OpenSM's
  fat-tree engine gives every destination one spine, chosen by the destination's position on
  its leaf, so IO nodes cabled to the same port number of different leaves share one spine.

GUIDs.  Switch node GUIDs and CA port GUIDs are the inventory's; where the inventory has none
(a leaf without ``guid``, spines without ``spine_guids``, a host without a port GUID) a stable
GUID is derived from the names (locally administered, first byte 0x02) and the layout says so.
A CA's node GUID is its port GUID minus one, as on most HCAs and as ibsim numbers them.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import networkx as nx

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.model import Attachment, Fabric, Router, Site

#: Ports an InfiniBand switch may have (PortInfo numbers ports with 8 bits, 255 is reserved).
MAX_SWITCH_PORTS = 254

# ----------------------------------------------------------------------------- GUIDs


def guid_int(text: str) -> int:
    """``0x0002c903...``, ``0002c903...`` or ``2c903...`` (ibnetdiscover's bracketed form)."""
    t = text.strip().lower()
    return int(t[2:] if t.startswith("0x") else t, 16)


def guid_str(value: int) -> str:
    """The one spelling lnetgen writes: ``0x`` and 16 hex digits."""
    return f"0x{value:016x}"


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


# ----------------------------------------------------------------------------- the port graph


@dataclass(frozen=True)
class IbLink:
    """Local ``port`` cabled to ``peer`` (a node id) at ``peer_port``."""

    port: int
    peer: str
    peer_port: int


@dataclass(frozen=True)
class IbNode:
    """A switch chip or a channel adapter, as ibnetdiscover names and describes it."""

    kind: str  # switch | ca
    guid: int  # node GUID
    ports: int
    desc: str
    links: tuple[IbLink, ...]
    port_guids: tuple[tuple[int, int], ...] = ()  # CA: (port, port GUID)
    sysimg_guid: int = 0

    @property
    def id(self) -> str:
        return f"{'S' if self.kind == 'switch' else 'H'}-{self.guid:016x}"

    def port_guid(self, port: int) -> int:
        """A switch answers with its node GUID on every port; a CA port has its own."""
        if self.kind == "switch":
            return self.guid
        for p, g in self.port_guids:
            if p == port:
                return g
        return self.guid + port


@dataclass(frozen=True)
class IbNet:
    nodes: tuple[IbNode, ...]

    def by_id(self) -> dict[str, IbNode]:
        return {n.id: n for n in self.nodes}


# ----------------------------------------------------------------------------- inventory -> net


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
        raise InputError(
            [
                Diagnostic(
                    site.file,
                    0,
                    0,
                    "error",
                    "E-FABRIC",
                    "$.fabrics",
                    f"site {site.name} has no fabric {name!r} (known: {known})",
                )
            ]
        )
    for f in site.fabrics:
        if f.name == site.client_fabric:
            return f
    return (
        next(f for f in site.fabrics if f.role == "storage")
        if any(f.role == "storage" for f in site.fabrics)
        else site.fabrics[0]
    )


def client_ports(site: Site) -> list[int]:
    """The leaf port of every fat-tree client, in client order (as the inventory assigned
    them: ``first_port`` onwards, in node-set order)."""
    ports = site.clients.ports
    if ports is None or len(ports) != len(site.clients):
        return [0] * len(site.clients)
    return [int(p) for p in ports]


def fabric_hosts(site: Site, fabric: Fabric) -> list[Host]:
    """Every host port the inventory cables to ``fabric`` (GUIDs not yet derived: 0)."""
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
            guid = guid_int(c.guids[i]) if c.guids else 0
            out.append(Host(name, "compute", iface, guid, Attachment(sw, leaf, ports[i])))
    for r in site.routers:
        if r.client_attach is not None and r.client_attach.switch in switches:
            out.append(
                Host(
                    r.name,
                    "router",
                    r.client_interface,
                    guid_int(r.client_guid) if r.client_guid else 0,
                    r.client_attach,
                )
            )
        if r.attach.switch in switches:
            out.append(
                Host(
                    r.name,
                    "router",
                    r.storage_interface,
                    guid_int(r.guid) if r.guid else 0,
                    r.attach,
                )
            )
    for s in site.servers:
        if s.attach.switch in switches:
            out.append(
                Host(s.name, "server", s.interface, guid_int(s.guid) if s.guid else 0, s.attach)
            )
    return out


def _fail(site: Site, msg: str, path: str = "$.fabrics") -> InputError:
    return InputError([Diagnostic(site.file, 0, 0, "error", "E-FABRIC", path, msg)])


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
        used.update(guid_int(g) for g in (*sw.spine_guids, *(lf.guid for lf in sw.leaves)) if g)
    used.update(h.guid for h in hs if h.guid)
    leaves: list[Chip] = []
    spines: list[Chip] = []
    for sw in fab.switches:
        for lf in sw.leaves:
            nports = lf.ports + (lf.uplinks if sw.spines else 0)
            if nports > MAX_SWITCH_PORTS:
                raise _fail(site, f"{sw.name}/{lf.name} would need {nports} ports")
            derived = not lf.guid
            g = (
                _derived_guid(f"{fab.name}/{sw.name}/leaf/{lf.name}", used)
                if derived
                else guid_int(lf.guid)
            )
            leaves.append(Chip(sw.name, lf.name, -1, g, nports, derived))
        for k in range(sw.spines):
            derived = k >= len(sw.spine_guids)
            g = (
                _derived_guid(f"{fab.name}/{sw.name}/spine/{k}", used)
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
                guid=_derived_guid(f"{fab.name}/host/{h.name}/{h.interface}", used),
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
                    links[chip.guid].append(IbLink(port, _sid(sp.guid), sport))
                    links[sp.guid].append(IbLink(sport, _sid(chip.guid), port))
                    ups.append(port)
            uplinks[(sw.name, lf.name)] = tuple(ups)
    ca_nodes: list[IbNode] = []
    for h in hosts:
        host_leaf = leaf_chip.get((h.attach.switch, h.attach.leaf))
        if host_leaf is None:
            raise _fail(
                site, f"{h.name} is attached to {h.attach.label()}, not a leaf of fabric {fab.name}"
            )
        chip = host_leaf
        links[chip.guid].append(IbLink(h.attach.port, _hid(h.guid - 1), 1))
        ca_nodes.append(
            IbNode(
                "ca",
                h.guid - 1,
                1,
                h.desc,
                (IbLink(1, _sid(chip.guid), h.attach.port),),
                ((1, h.guid),),
            )
        )
    sysimg = {sw.name: guid_int(sw.guid) if sw.guid else 0 for sw in fab.switches}
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
    )


def fab_kind(fab: Fabric, switch: str) -> str:
    for sw in fab.switches:
        if sw.name == switch:
            return sw.kind
    return ""


def _sid(guid: int) -> str:
    return f"S-{guid:016x}"


def _hid(guid: int) -> str:
    return f"H-{guid:016x}"


def render_net(net: IbNet, header: Sequence[str] = ()) -> str:
    """``net`` in ibnetdiscover syntax: loadable by ``ibsim`` and by :func:`parse_ibnetdiscover`.

    Before each node its GUID is set (``switchguid=`` / ``caguid=``; ibsim numbers a CA's
    ports from its node GUID + 1), and a director chip carries the chassis GUID as
    ``sysimgguid``.  Links are written as ``lid 0 4xQDR`` so ibsim has a width and speed.
    """
    by_id = net.by_id()
    out = [f"# {line}" for line in header]
    for n in net.nodes:
        out.append("")
        if n.sysimg_guid:
            out.append(f"sysimgguid={guid_str(n.sysimg_guid)}")
        if n.kind == "switch":
            out.append(f"switchguid={guid_str(n.guid)}")
            out.append(f'Switch\t{n.ports} "{n.id}"\t\t# "{n.desc}" base port 0 lid 0 lmc 0')
            for lk in n.links:
                peer = by_id[lk.peer]
                pg = f"({peer.port_guid(lk.peer_port):x})" if peer.kind == "ca" else ""
                out.append(
                    f'[{lk.port}]\t"{lk.peer}"[{lk.peer_port}]{pg}\t\t# "{peer.desc}" lid 0 4xQDR'
                )
        else:
            out.append(f"caguid={guid_str(n.guid)}")
            out.append(f'Ca\t{n.ports} "{n.id}"\t\t# "{n.desc}"')
            for lk in n.links:
                peer = by_id[lk.peer]
                out.append(
                    f'[{lk.port}]({n.port_guid(lk.port):x}) \t"{lk.peer}"'
                    f'[{lk.peer_port}]\t\t# lid 0 lmc 0 "{peer.desc}" lid 0 4xQDR'
                )
    return "\n".join(out) + "\n"


def export_ibsim(site: Site, fabric: str | None = None) -> str:
    """The fabric (default: the compute fabric, else the storage fabric) as an ibsim net file."""
    lay = layout(site, fabric)
    header = [
        f"ibsim net file of fabric {lay.fabric.name} ({lay.fabric.role}) of site "
        f"{site.name}, generated by lnetgen from inventory sha256:{site.digest[:16]}",
        f"{len(lay.leaves)} leaf and {len(lay.spines)} spine switch chips, "
        f"{len(lay.hosts)} host ports; each leaf uplink u goes to spine u mod spines",
        "run: IBSIM_SOCKNAME=<name> ibsim -s -n <this file>",
    ]
    derived = lay.derived()
    if derived:
        header.append(f"GUIDs invented here (none in the inventory): {_short(derived)}")
    return render_net(lay.net, header)


def _short(items: Sequence[str], n: int = 8) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


# ----------------------------------------------------------------------------- ibnetdiscover

_NODE_RE = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*(.*))?$')
_PORT_RE = re.compile(
    r'^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*"([^"]+)"\[(\d+)\]'
    r"(?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*(?:#.*)?$"
)
_GUID_LINE_RE = re.compile(
    r"^(sysimgguid|switchguid|caguid|rtguid|hcaguids)\s*=\s*(0x)?"
    r"([0-9a-fA-F]+)"
)
_DESC_RE = re.compile(r'^"([^"]*)"')


def parse_ibnetdiscover(text: str, file: str = "<ibnetdiscover>") -> IbNet:
    """Nodes and links of ``ibnetdiscover`` output (infiniband-diags' default format).

    Reads ``switchguid=``/``caguid=``/``sysimgguid=`` lines, ``Switch``/``Ca`` headers with
    their ``# "description"``, and ``[port]`` lines (``(portguid)`` on either side,
    ``[ext N]`` ignored).  IB router (``Rt``) nodes are skipped.
    Raises ``InputError`` with the line of every line it cannot read, or for links that the
    two ends disagree about.
    """
    diags: list[Diagnostic] = []
    nodes_out: list[IbNode] = []
    pending: dict[str, int] = {}
    cur: dict[str, Any] | None = None

    def finish() -> None:
        nonlocal cur
        if cur is not None and cur["kind"] != "router":
            nodes_out.append(
                IbNode(
                    cur["kind"],
                    cur["guid"],
                    cur["ports"],
                    cur["desc"],
                    tuple(sorted(cur["links"], key=lambda lk: lk.port)),
                    tuple(sorted(cur["pguids"].items())),
                    cur["sysimg"],
                )
            )
        cur = None

    def bad(lineno: int, msg: str) -> None:
        diags.append(Diagnostic(file, lineno, 1, "error", "E-IBNET", "$", msg))

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            if not line:
                finish()
            continue
        m = _GUID_LINE_RE.match(line)
        if m:
            finish()
            pending[m.group(1)] = int(m.group(3), 16)
            continue
        if line.startswith(("vendid", "devid")):
            finish()
            continue
        m = _NODE_RE.match(line)
        if m:
            finish()
            kind = {"Switch": "switch", "Rt": "router"}.get(m.group(1), "ca")
            nid = m.group(3)
            rest = m.group(4) or ""
            dm = _DESC_RE.match(rest)
            desc = dm.group(1) if dm else rest.strip()
            key = {"switch": "switchguid", "router": "rtguid"}.get(kind, "caguid")
            guid = pending.get(key) or _id_guid(nid)
            if guid is None:
                bad(lineno, f"cannot tell the GUID of node {nid!r} (no {key}= line before it)")
                guid = 0
            cur = {
                "kind": kind,
                "guid": guid,
                "ports": int(m.group(2)),
                "desc": desc,
                "links": [],
                "pguids": {},
                "sysimg": pending.get("sysimgguid", 0),
                "id": nid,
            }
            pending = {}
            continue
        m = _PORT_RE.match(line)
        if m and cur is not None:
            port = int(m.group(1))
            peer = m.group(3)
            peer_guid = _id_guid(peer)
            if peer_guid is None:
                bad(lineno, f"peer {peer!r} is not an ibnetdiscover node id (S-/H-<guid>)")
                continue
            if cur["kind"] == "ca" and m.group(2):
                cur["pguids"][port] = int(m.group(2), 16)
            cur["links"].append(IbLink(port, peer, int(m.group(4))))
            continue
        bad(lineno, f"cannot read this line: {line[:80]!r}")
    finish()
    if diags:
        raise InputError(diags)
    net = IbNet(tuple(nodes_out))
    _check_links(net, file)
    return net


def _id_guid(nid: str) -> int | None:
    m = re.fullmatch(r"[SHR]-([0-9a-fA-F]{1,16})", nid)
    return int(m.group(1), 16) if m else None


def _check_links(net: IbNet, file: str) -> None:
    by_id = net.by_id()
    problems: list[str] = []
    for n in net.nodes:
        for lk in n.links:
            peer = by_id.get(lk.peer)
            if peer is None:
                if lk.peer.startswith("R-"):
                    continue
                problems.append(
                    f"{n.id} port {lk.port} is cabled to {lk.peer}, which the "
                    "output does not describe"
                )
                continue
            back = [b for b in peer.links if b.port == lk.peer_port]
            if not back or back[0].peer != n.id or back[0].peer_port != lk.port:
                problems.append(
                    f"{n.id} port {lk.port} -> {lk.peer} port {lk.peer_port}, but "
                    "the other end does not say so"
                )
    if problems:
        raise InputError(
            [Diagnostic(file, 0, 0, "error", "E-IBNET-LINK", "$", p) for p in sorted(problems)[:20]]
        )


# ----------------------------------------------------------------------------- net -> inventory

#: Node descriptions that name a director's chip: "wfibcore1 Leaf L01", "core Spine 111A",
#: Mellanox "MF0;core1:SX6536/L05/U1", "MF0;core1:CS7520/S03/U1".
_CHASSIS_RES = (
    re.compile(
        r"^(?P<chassis>[A-Za-z0-9][A-Za-z0-9_.-]*)\s+(?P<kind>Leaf|Spine|Line|LC|SC)"
        r"\s*(?P<id>[A-Za-z0-9_.-]+)",
        re.IGNORECASE,
    ),
    re.compile(
        r"^MF0;(?P<chassis>[A-Za-z0-9_.-]+):[^/]*/(?P<kind>[LS])(?P<id>\d+)"
        r"(?:/U\d+)?$"
    ),
)
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def _chip_hint(desc: str) -> tuple[str, str, str] | None:
    """(chassis, 'leaf'|'spine', id) when a description names a director chip."""
    for rx in _CHASSIS_RES:
        m = rx.match(desc)
        if m:
            kind = m.group("kind").lower()
            role = "spine" if kind in ("spine", "s", "sc") else "leaf"
            return m.group("chassis"), role, m.group("id")
    return None


def _safe(name: str, fallback: str) -> str:
    s = _SAFE_NAME.sub("-", name).strip("-.")
    return s[:63] if s and s[0].isalnum() else fallback


@dataclass(frozen=True)
class ImportedHost:
    name: str
    guid: str
    switch: str
    leaf: str
    port: int
    desc: str


@dataclass
class Imported:
    """The inventory's view of a discovered fabric: a ``fabrics`` entry and host cabling."""

    fabric: dict[str, Any]
    hosts: list[ImportedHost]
    notes: list[str]


def infer_fabric(net: IbNet, name: str, role: str = "storage") -> Imported:
    """Leaves, spines and switches of a discovered fabric, for the inventory.

    * Leaves are switches with a CA cabled to them; spines are switches cabled only to
      switches and adjacent to a leaf.  Switches further up (a three-tier tree) are left out
      with a note: the inventory models leaf/spine.
    * A director is recognised from node descriptions that name its chips (``<chassis> Leaf
      <id>`` / ``<chassis> Spine <id>``, or Mellanox ``MF0;<chassis>:<model>/L05/U1``), or from
      a system image GUID shared by several switch chips.  Its chips become one ``director``
      switch with one leaf per line-card chip and ``spine_guids``.
    * Without such hints, leaf switches that share spines (a leaf/spine network of separate
      boxes) become one logical ``director`` named ``<fabric>-core``: its "leaf modules" are
      the leaf switches, which is what fine-grained routing groups by.  A leaf switch with no
      spine becomes a ``tor`` switch.

    A leaf's ``ports`` is its port count minus its uplinks when every host sits below that,
    else its port count; attachments keep the chip's port numbers.
    """
    by_id = net.by_id()
    g = nx.Graph()
    for n in net.nodes:
        g.add_node(n.id)
    for n in net.nodes:
        for lk in n.links:
            if lk.peer in by_id:
                g.add_edge(n.id, lk.peer)
    switches = [n for n in net.nodes if n.kind == "switch"]
    has_host = {
        n.id
        for n in switches
        if any(by_id[lk.peer].kind == "ca" for lk in n.links if lk.peer in by_id)
    }
    leaves = [n for n in switches if n.id in has_host]
    leaf_ids = {n.id for n in leaves}
    spines = [
        n
        for n in switches
        if n.id not in has_host and any(p in leaf_ids for p in g.neighbors(n.id))
    ]
    notes: list[str] = []
    upper = [n for n in switches if n.id not in has_host and n not in spines]
    if upper:
        notes.append(
            f"{len(upper)} switch(es) above the spines are left out (the inventory "
            f"models two tiers): {_short([n.desc or n.id for n in upper])}"
        )

    # chassis: from descriptions, else from shared system image GUIDs
    chassis: dict[str, str] = {}
    for n in (*leaves, *spines):
        hint = _chip_hint(n.desc)
        if hint:
            chassis[n.id] = _safe(hint[0], "switch")
    sysimg = Counter(n.sysimg_guid for n in (*leaves, *spines) if n.sysimg_guid)
    for n in (*leaves, *spines):
        if n.id not in chassis and n.sysimg_guid and sysimg[n.sysimg_guid] > 1:
            chassis[n.id] = f"chassis-{n.sysimg_guid:016x}"
    # leaves without chassis that share spines: one logical director per component
    sub = g.subgraph([n.id for n in (*leaves, *spines) if n.id not in chassis])
    comps = sorted((sorted(c) for c in nx.connected_components(sub)), key=lambda c: c[0])
    tor: set[str] = set()
    multi = [c for c in comps if len(c) > 1]
    for k, comp in enumerate(multi):
        label = f"{name}-core" if len(multi) == 1 else f"{name}-core{k + 1}"
        for nid in comp:
            chassis[nid] = _safe(label, "core")
    for comp in comps:
        if len(comp) == 1:
            tor.add(comp[0])
    for n in leaves:
        if n.id in tor:
            name_ = _box_name(n.desc) or f"sw-{n.guid:016x}"
            if name_ in chassis.values():  # two boxes that describe themselves alike
                name_ = f"{name_}-{n.guid:016x}"[:63]
            chassis[n.id] = name_

    leaf_of: dict[str, tuple[str, str]] = {}
    groups: dict[str, dict[str, list[IbNode]]] = defaultdict(lambda: {"leaf": [], "spine": []})
    for n in leaves:
        groups[chassis[n.id]]["leaf"].append(n)
    for n in spines:
        groups[chassis[n.id]]["spine"].append(n)
    switches_out: list[dict[str, Any]] = []
    for sw_name in sorted(groups):
        grp = groups[sw_name]
        if not grp["leaf"]:
            notes.append(f"spines of {sw_name} have no leaf with hosts; left out")
            continue
        spine_ids = {n.id for n in grp["spine"]}
        if all(n.id in tor for n in grp["leaf"]) and not grp["spine"]:
            n = grp["leaf"][0]
            entry: dict[str, Any] = {
                "name": sw_name,
                "kind": "tor",
                "guid": guid_str(n.guid),
                "ports": n.ports,
            }
            up = sum(1 for lk in n.links if lk.peer in by_id and by_id[lk.peer].kind == "switch")
            if up:
                entry["uplinks"] = up
            leaf_of[n.id] = (sw_name, "")
            switches_out.append(entry)
            continue
        leaf_entries: list[dict[str, Any]] = []
        names_used: set[str] = set()
        for n in sorted(grp["leaf"], key=lambda n: _leaf_sort(n)):
            hint = _chip_hint(n.desc)
            lname = (
                _safe(hint[2], "")
                if hint and hint[1] == "leaf"
                else ""
                if hint
                else _box_name(n.desc)
            )
            if not lname or lname in names_used:
                lname = f"L{len(leaf_entries) + 1:02d}"
            names_used.add(lname)
            ups = sum(1 for lk in n.links if lk.peer in spine_ids)
            hp = _host_ports(n, by_id)
            ports = n.ports - ups if hp and max(hp) <= n.ports - ups else n.ports
            leaf_entries.append(
                {"name": lname, "ports": ports, "uplinks": ups, "guid": guid_str(n.guid)}
            )
            leaf_of[n.id] = (sw_name, lname)
        entry = {"name": sw_name, "kind": "director"}
        sysimgs = {n.sysimg_guid for n in (*grp["leaf"], *grp["spine"])}
        if len(sysimgs) == 1 and 0 not in sysimgs:
            entry["guid"] = guid_str(sysimgs.pop())
        entry["spines"] = len(grp["spine"])
        if grp["spine"]:
            entry["spine_guids"] = [guid_str(n.guid) for n in sorted(grp["spine"], key=_leaf_sort)]
        entry["leaves"] = leaf_entries
        switches_out.append(entry)

    hosts: list[ImportedHost] = []
    for n in net.nodes:
        if n.kind != "ca":
            continue
        for lk in n.links:
            if lk.peer not in leaf_of:
                continue
            sw_name, lname = leaf_of[lk.peer]
            hname = _safe(n.desc.split()[0] if n.desc.split() else "", f"host-{n.guid:016x}")
            hosts.append(
                ImportedHost(
                    hname, guid_str(n.port_guid(lk.port)), sw_name, lname, lk.peer_port, n.desc
                )
            )
    hosts.sort(key=lambda h: (h.switch, h.leaf, h.port, h.name))
    fabric = {"name": _safe(name, "fabric"), "role": role, "switches": switches_out}
    return Imported(fabric, hosts, notes)


def _box_name(desc: str) -> str:
    """The host name a stand-alone switch reports: ``MF0;leaf01:MSB7700/U1`` -> ``leaf01``,
    ``leaf-a rack 3`` -> ``leaf-a``; '' when there is none."""
    m = re.match(r"^MF0;([^:]+):", desc)
    word = m.group(1) if m else (desc.split()[0] if desc.split() else "")
    return _safe(word, "")


def _host_ports(n: IbNode, by_id: dict[str, IbNode]) -> list[int]:
    return [lk.port for lk in n.links if lk.peer in by_id and by_id[lk.peer].kind == "ca"]


def _leaf_sort(n: IbNode) -> tuple[int, str, int]:
    """Order chips by the number in their description (L2 before L10), then GUID."""
    hint = _chip_hint(n.desc)
    ident = hint[2] if hint else n.desc
    m = re.search(r"(\d+)", ident)
    return (int(m.group(1)) if m else 1 << 30, ident, n.guid)


def imported_yaml(imp: Imported, source: str) -> str:
    """The ``fabrics:`` section (paste into an inventory) and a ``hosts:`` list of cabling."""
    import yaml

    lines = [
        f"# fabric discovered from {source} by lnetgen fabric import",
        "# 'fabrics' is an inventory section as is; 'hosts' says where each host port is",
        "# cabled: copy guid and attach into routers/servers, or node sets into",
        "# topology.attach for compute nodes, then remove this key.",
    ]
    lines += [f"# note: {n}" for n in imp.notes]
    doc = {
        "fabrics": [imp.fabric],
        "hosts": [
            {
                "name": h.name,
                "guid": h.guid,
                "attach": (
                    {"switch": h.switch, "leaf": h.leaf, "port": h.port}
                    if h.leaf
                    else {"switch": h.switch, "port": h.port}
                ),
            }
            for h in imp.hosts
        ],
    }
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)
    return "\n".join(lines) + "\n" + body


# ----------------------------------------------------------------------------- IO placement


@dataclass(frozen=True)
class PortMove:
    """Move ``host`` from ``old`` to ``new``; ``swap`` is the host now on ``new`` ('' if free)."""

    host: str
    old: Attachment
    new: Attachment
    swap: str = ""


def _io_routers(site: Site) -> list[tuple[int, Router]]:
    """Routers cabled to the IB compute fabric, with their inventory position."""
    return [
        (i, r)
        for i, r in enumerate(site.routers)
        if r.client_attach is not None
        and site.client_fabric
        and _switch_fabric(site, r.client_attach.switch) == site.client_fabric
    ]


def _switch_fabric(site: Site, switch: str) -> str:
    sw = site.switch(switch)
    return sw.fabric if sw is not None else ""


def io_port_findings(site: Site) -> list[Diagnostic]:
    """W-IO-SAME-PORT: IO nodes on the same port position (port mod spines) of different leaves
    of one compute-fabric director, more of them than an even spread needs.

    OpenSM's ftree engine routes each destination through one spine, picked by the host's
    position among its leaf's ports, so such IO nodes share a spine (seed 002: all 24 Wolf IO
    nodes on port 18 -> one spine of 18 carried all compute->IO traffic).
    """
    out: list[Diagnostic] = []
    by_switch: dict[str, list[tuple[int, Router]]] = defaultdict(list)
    for i, r in _io_routers(site):
        assert r.client_attach is not None
        by_switch[r.client_attach.switch].append((i, r))
    for sw_name in sorted(by_switch):
        sw = site.switch(sw_name)
        if sw is None or sw.spines < 2:
            continue
        spines = sw.spines
        items = by_switch[sw_name]
        bound = math.ceil(len(items) / spines)
        groups: dict[int, list[tuple[int, Router]]] = defaultdict(list)
        for i, r in items:
            assert r.client_attach is not None
            groups[(r.client_attach.port - 1) % spines].append((i, r))
        for residue in sorted(groups):
            grp = groups[residue]
            leaves = {r.client_attach.leaf for _, r in grp if r.client_attach is not None}
            if len(grp) <= bound or len(leaves) < 2:
                continue
            ports = sorted({r.client_attach.port for _, r in grp if r.client_attach is not None})
            names = nodes.fold(r.name for _, r in grp)
            where = (
                f"port {ports[0]}"
                if len(ports) == 1
                else f"ports {', '.join(map(str, ports))} (same position mod {spines})"
            )
            first = grp[0][0]
            out.append(
                Diagnostic(
                    site.file,
                    0,
                    0,
                    "warning",
                    "W-IO-SAME-PORT",
                    f"$.routers[{first}].client.attach.port",
                    f"{len(grp)} IO nodes ({names}) sit on {where} of {len(leaves)} different "
                    f"leaves of {sw_name}; OpenSM fat-tree routing sends all traffic to them "
                    f"through the same spine of {spines} (an even spread puts at most {bound} "
                    "on a port position)",
                    hint=f"stagger their ports: lnetgen fabric plan-ports {site.file}",
                )
            )
    return out


def plan_ports(site: Site, hosts: Sequence[Host] | None = None) -> list[PortMove]:
    """A staggered port plan for the IO nodes of the compute fabric: IO node ``k`` of a
    director (in leaf order) goes to port position ``k mod spines`` of its leaf, swapping
    places with the host already there.  Returns the moves, empty when nothing must move.

    Positions are chosen among the leaf's existing host ports; an IO node already on a
    position no other IO node of the switch uses stays where it is.
    """
    if not site.client_fabric:
        return []
    fab = fabric_of(site, site.client_fabric)
    hs = list(hosts) if hosts is not None else fabric_hosts(site, fab)
    taken: dict[Attachment, str] = {h.attach: h.name for h in hs}
    io = sorted((h for h in hs if h.kind == "router"), key=lambda h: (h.attach, h.name))
    moves: list[PortMove] = []
    by_switch: dict[str, list[Host]] = defaultdict(list)
    for h in io:
        by_switch[h.attach.switch].append(h)
    for sw_name in sorted(by_switch):
        sw = site.switch(sw_name)
        if sw is None or sw.spines < 2:
            continue
        spines = sw.spines
        group = by_switch[sw_name]
        bound = math.ceil(len(group) / spines)
        use: Counter[int] = Counter()
        keep: set[str] = set()
        # keep IO nodes whose position is still free (first come, in leaf order)
        for h in group:
            pos = (h.attach.port - 1) % spines
            if use[pos] < bound:
                use[pos] += 1
                keep.add(h.name)
        io_ports = {h.attach for h in group}
        for k, h in enumerate(group):
            if h.name in keep:
                continue
            leaf = sw.leaf(h.attach.leaf)
            nports = leaf.ports if leaf is not None else h.attach.port
            options = [
                p
                for p in range(1, nports + 1)
                if Attachment(sw_name, h.attach.leaf, p) not in io_ports
            ]
            if not options:
                continue

            p = min(options, key=functools.partial(_cost, k=k, spines=spines, use=use))
            new = Attachment(sw_name, h.attach.leaf, p)
            use[(p - 1) % spines] += 1
            moves.append(PortMove(h.name, h.attach, new, taken.get(new, "")))
            io_ports.discard(h.attach)
            io_ports.add(new)
            if new in taken:
                taken[h.attach] = taken[new]
            else:
                taken.pop(h.attach, None)
            taken[new] = h.name
    return moves


def _cost(port: int, k: int, spines: int, use: Counter[int]) -> tuple[int, int, int]:
    """Prefer the least used position, then position ``k`` (the IO node's turn), then the
    lowest port."""
    pos = (port - 1) % spines
    return (use[pos], (pos - k) % spines, port)


def apply_moves(hosts: Iterable[Host], moves: Sequence[PortMove]) -> list[Host]:
    """Hosts after a port plan: each moved IO node takes its new port, a swapped host the old
    one."""
    new_of = {m.host: m.new for m in moves}
    swap_of = {m.swap: m.old for m in moves if m.swap}
    out = []
    for h in hosts:
        if h.kind == "router" and h.name in new_of and h.attach.switch == new_of[h.name].switch:
            out.append(replace(h, attach=new_of[h.name]))
        elif h.name in swap_of and h.attach.switch == swap_of[h.name].switch:
            out.append(replace(h, attach=swap_of[h.name]))
        else:
            out.append(h)
    return out
