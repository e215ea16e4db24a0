"""Roles in a discovered fabric: which switches are leaves and spines, which chips make up a
director, and where each host is cabled, written as the inventory's ``fabrics`` section.

networkx finds the tiers and the leaf/spine groups; node descriptions and system image GUIDs
name the directors.  The result is YAML for a person to paste into an inventory, not a model.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import networkx as nx

from lnetgen.diagnostics import clip, printable
from lnetgen.fabric.graph import IbNet, IbNode, guid_str, name_list

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
#: A fabric name as the inventory takes it (schemas/site.schema.json ``$defs/name``).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}", re.ASCII)


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


def fabric_name_problem(name: str) -> str | None:
    """Why ``name`` (``fabric import --name``) cannot name a fabric as given, or None.  A name
    read from a node description is made safe (``_safe``); one the user typed is not changed
    behind their back (``../../x`` became ``x``): it is refused, with the name that would do."""
    if _NAME.fullmatch(name):
        return None
    safe = _safe(name, "")
    fit = f" (for instance {safe!r})" if safe else ""
    return (
        "a fabric name starts with a letter or digit and holds letters, digits, '_', '.' and "
        f"'-' only, at most 63 characters{fit}"
    )


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

    * Leaves are switches with a CA cabled to them, and a director's line-card chips without
      hosts (named a leaf chip, or sharing the chassis's system image GUID without being
      cabled to a leaf with hosts); spines are the other switches adjacent to a leaf.
      Switches further up (a three-tier tree) are left out with a note: the inventory models
      leaf/spine.
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
    leaves, spines, upper = _tiers(net, by_id, g)
    notes: list[str] = []
    if upper:
        notes.append(
            f"{len(upper)} switch(es) above the spines are left out (the inventory "
            f"models two tiers): {name_list([_shown(n.desc) or n.id for n in upper])}"
        )
    chassis, tor = _chassis(g, leaves, spines, name)
    groups: dict[str, dict[str, list[IbNode]]] = defaultdict(lambda: {"leaf": [], "spine": []})
    for n in leaves:
        groups[chassis[n.id]]["leaf"].append(n)
    for n in spines:
        groups[chassis[n.id]]["spine"].append(n)
    leaf_of: dict[str, tuple[str, str]] = {}
    switches_out: list[dict[str, Any]] = []
    for sw_name in sorted(groups):
        grp = groups[sw_name]
        if not grp["leaf"]:
            notes.append(f"spines of {sw_name} have no leaf with hosts; left out")
        elif all(n.id in tor for n in grp["leaf"]) and not grp["spine"]:
            switches_out.append(_tor_entry(sw_name, grp["leaf"][0], by_id, leaf_of))
        else:
            switches_out.append(_director_entry(sw_name, grp["leaf"], grp["spine"], by_id, leaf_of))
    fabric = {
        "name": name if _NAME.fullmatch(name) else _safe(name, "fabric"),
        "role": role,
        "switches": switches_out,
    }
    return Imported(fabric, _hosts(net, leaf_of), notes)


def _tiers(
    net: IbNet, by_id: dict[str, IbNode], g: nx.Graph
) -> tuple[list[IbNode], list[IbNode], list[IbNode]]:
    """(leaves, spines, switches further up) of the net, in net order."""
    switches = [n for n in net.nodes if n.kind == "switch"]
    has_host = {
        n.id
        for n in switches
        if any(by_id[lk.peer].kind == "ca" for lk in n.links if lk.peer in by_id)
    }
    # a line card with no host cabled is still a leaf: its description names a leaf chip, or
    # it shares a director's system image GUID with leaves that have hosts
    host_images = {n.sysimg_guid for n in switches if n.id in has_host and n.sysimg_guid}
    leaves = [n for n in switches if n.id in has_host or _empty_leaf(n, host_images, g, has_host)]
    leaf_ids = {n.id for n in leaves}
    spines = [
        n
        for n in switches
        if n.id not in has_host and any(p in leaf_ids for p in g.neighbors(n.id))
    ]
    spine_ids = {n.id for n in spines}  # a set: ``n not in spines`` took 19 s for 5,000 pairs
    upper = [n for n in switches if n.id not in leaf_ids and n.id not in spine_ids]
    return leaves, spines, upper


def _empty_leaf(n: IbNode, host_images: set[int], g: nx.Graph, has_host: set[str]) -> bool:
    """Whether a switch without hosts is a director's leaf chip (by its description, or by a
    system image GUID it shares with leaves that have hosts and no leaf neighbour)."""
    hint = _chip_hint(n.desc)
    if hint is not None:
        return hint[1] == "leaf"
    if n.sysimg_guid and n.sysimg_guid in host_images:
        return not any(p in has_host for p in g.neighbors(n.id))
    return False


def _chassis(
    g: nx.Graph, leaves: list[IbNode], spines: list[IbNode], name: str
) -> tuple[dict[str, str], set[str]]:
    """The switch each chip belongs to (node id -> switch name), and the ids of the leaves
    that stand alone (``tor`` switches).

    From descriptions, else from shared system image GUIDs; leaves left over that share
    spines become one logical director per connected component.
    """
    chassis: dict[str, str] = {}
    for n in (*leaves, *spines):
        hint = _chip_hint(n.desc)
        if hint:
            chassis[n.id] = _safe(hint[0], "switch")
    sysimg = Counter(n.sysimg_guid for n in (*leaves, *spines) if n.sysimg_guid)
    for n in (*leaves, *spines):
        if n.id not in chassis and n.sysimg_guid and sysimg[n.sysimg_guid] > 1:
            chassis[n.id] = f"chassis-{n.sysimg_guid:016x}"
    # leaves without a chassis that share spines: one logical director per component
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
    used = set(chassis.values())  # a set: ``in chassis.values()`` per leaf was quadratic
    for n in leaves:
        if n.id in tor:
            name_ = _box_name(n.desc) or f"sw-{n.guid:016x}"
            if name_ in used:  # two boxes that describe themselves alike
                name_ = f"{name_}-{n.guid:016x}"[:63]
            chassis[n.id] = name_
            used.add(name_)
    return chassis, tor


def _tor_entry(
    sw_name: str, n: IbNode, by_id: dict[str, IbNode], leaf_of: dict[str, tuple[str, str]]
) -> dict[str, Any]:
    """The ``tor`` switch of a stand-alone leaf; records its hosts' leaf in ``leaf_of``."""
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
    return entry


def _director_entry(
    sw_name: str,
    leaves: list[IbNode],
    spines: list[IbNode],
    by_id: dict[str, IbNode],
    leaf_of: dict[str, tuple[str, str]],
) -> dict[str, Any]:
    """The ``director`` switch of a chassis (or of leaves sharing spines): one leaf per leaf
    chip, named from its description where it has one; records each in ``leaf_of``."""
    spine_ids = {n.id for n in spines}
    leaf_entries: list[dict[str, Any]] = []
    names_used: set[str] = set()
    for n in sorted(leaves, key=_leaf_sort):
        hint = _chip_hint(n.desc)
        lname = (
            _safe(hint[2], "") if hint and hint[1] == "leaf" else "" if hint else _box_name(n.desc)
        )
        if not lname or lname in names_used:
            lname = f"L{len(leaf_entries) + 1:02d}"
        names_used.add(lname)
        ups = sum(1 for lk in n.links if lk.peer in spine_ids)
        hp = _host_ports(n, by_id)
        ports = n.ports - ups if max(hp, default=0) <= n.ports - ups else n.ports
        leaf_entries.append(
            {"name": lname, "ports": ports, "uplinks": ups, "guid": guid_str(n.guid)}
        )
        leaf_of[n.id] = (sw_name, lname)
    entry: dict[str, Any] = {"name": sw_name, "kind": "director"}
    sysimgs = {n.sysimg_guid for n in (*leaves, *spines)}
    if len(sysimgs) == 1 and 0 not in sysimgs:
        entry["guid"] = guid_str(sysimgs.pop())
    entry["spines"] = len(spines)
    if spines:
        entry["spine_guids"] = [guid_str(n.guid) for n in sorted(spines, key=_leaf_sort)]
    entry["leaves"] = leaf_entries
    return entry


def _hosts(net: IbNet, leaf_of: dict[str, tuple[str, str]]) -> list[ImportedHost]:
    """Every CA port cabled to a leaf, named by the first word of its description."""
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
    return hosts


def _shown(desc: str) -> str:
    """A node description fit for a note (a YAML comment line and the terminal): control and
    bidi characters escaped, at most ``MAX_SHOWN`` characters."""
    return printable(clip(desc))


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
    m = re.search(r"[0-9]{1,9}", ident)  # int() of 4,300 or more digits raises ValueError
    return (int(m.group()) if m else 1 << 30, ident, n.guid)


def imported_yaml(imp: Imported, source: str) -> str:
    """The ``fabrics:`` section (paste into an inventory) and a ``hosts:`` list of cabling."""
    import yaml

    lines = [
        f"# fabric discovered from {printable(source)} by lnetgen fabric import",
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
    # libyaml's emitter when there is one: the same text, 2.5 times as fast (20,000 hosts: 14 s)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    body = yaml.dump(doc, Dumper=dumper, sort_keys=False, default_flow_style=None, width=100)
    return "\n".join(lines) + "\n" + body
