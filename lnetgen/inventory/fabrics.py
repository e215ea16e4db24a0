"""The ``fabrics`` section: switches and their leaf modules; and attachments to them.

Reads ``fabrics[].switches[]``: top-of-rack switches (``ports``, ``uplinks``) and directors
(``leaves`` as a count or a list, ``spines``, ``spine_guids``), with their GUIDs, and the
OpenSM settings the site recorded (``fabrics[].opensm``: E-OPENSM; E-SCHEMA for a
``measured`` text that is not one printable line, W-OPENSM-UNMEASURED without one).  Reports
E-SWITCH, E-DUP-NAME (fabric, switch, leaf names), E-GUID; ``Fabrics.attach`` reports
E-ATTACH-SWITCH, E-ATTACH-FABRIC, E-ATTACH-LEAF and E-ATTACH-PORT for every host's attachment.
Adds ``Site.fabrics``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lnetgen.inventory.context import Context, Registry
from lnetgen.inventory.messages import did_you_mean, show
from lnetgen.inventory.rates import switch_rates
from lnetgen.model import MAX_SWITCH_PORTS, Attachment, Fabric, Leaf, OpenSMChoice, Switch
from lnetgen.yamlsrc import Path


def module_label(module: tuple[str, str]) -> str:
    """``switch/leaf``, or the switch alone for a top-of-rack switch."""
    return f"{module[0]}/{module[1]}" if module[1] else module[0]


@dataclass(frozen=True)
class Fabrics:
    """The checked fabrics, and the look-ups attachments resolve against."""

    fabrics: tuple[Fabric, ...]
    #: switch name -> switch, and fabric name -> role (the first of each name when repeated)
    switches: dict[str, Switch]
    roles: dict[str, str]

    def fabric_of(self, a: Attachment) -> str:
        return self.switches[a.switch].fabric

    def attach(
        self, ctx: Context, spec: dict[str, Any], path: Path, role: str, who: str
    ) -> Attachment | None:
        """Resolve and check one attachment; the port itself is claimed by the caller."""
        sw = self.switches.get(spec["switch"])
        if sw is None:
            ctx.err(
                (*path, "switch"),
                "E-ATTACH-SWITCH",
                f"{who} is attached to switch {spec['switch']!r}, which is not defined",
                hint=did_you_mean(spec["switch"], self.switches),
            )
            return None
        fabric_role = self.roles[sw.fabric]
        if fabric_role != role:
            ctx.err(
                (*path, "switch"),
                "E-ATTACH-FABRIC",
                f"{who} must be on a {role} fabric, but {sw.name} is on "
                f"{fabric_role} fabric {sw.fabric!r}",
            )
            return None
        leaf_name = spec.get("leaf", "")
        if sw.kind == "tor" and leaf_name:
            ctx.err(
                (*path, "leaf"),
                "E-ATTACH-LEAF",
                f"{sw.name} is a top-of-rack switch without leaf modules; drop 'leaf'",
            )
            return None
        leaf = sw.leaf(leaf_name)
        if leaf is None:
            if not leaf_name:
                ctx.err(
                    path,
                    "E-ATTACH-LEAF",
                    f"{who} is attached to director switch {sw.name} without a 'leaf'",
                )
            else:
                ctx.err(
                    (*path, "leaf"),
                    "E-ATTACH-LEAF",
                    f"switch {sw.name} has no leaf module {leaf_name!r} (attachment of {who})",
                    hint=did_you_mean(leaf_name, [lf.name for lf in sw.leaves]),
                )
            return None
        port = spec["port"]
        if port > leaf.ports:
            ctx.err(
                (*path, "port"),
                "E-ATTACH-PORT",
                f"port {port} of {who} does not exist: {module_label((sw.name, leaf_name))} has "
                f"{leaf.ports} external ports",
            )
            return None
        return Attachment(sw.name, leaf_name, port)


def check_fabrics(ctx: Context) -> Fabrics:
    """Every fabric with its switches and leaves; names and GUIDs claimed or reported."""
    out = []
    fabric_names = Registry.of_names()
    switch_names = Registry.of_names()
    for fi, f in enumerate(ctx.data["fabrics"]):
        fabric_names.claim(f["name"], ("fabrics", fi, "name"), "fabric")
        switches = []
        for si, s in enumerate(f["switches"]):
            p: Path = ("fabrics", fi, "switches", si)
            switch_names.claim(s["name"], (*p, "name"), "switch")
            if "guid" in s:
                kind = "chip" if s["kind"] == "tor" else "switch"  # a director: its chassis
                ctx.guid(s["guid"], (*p, "guid"), f"switch {s['name']}", kind)
            for gi, g in enumerate(s.get("spine_guids", [])):
                ctx.guid(g, (*p, "spine_guids", gi), f"spine {gi + 1} of {s['name']}", "chip")
            leaves = _tor_leaf(ctx, s, p) if s["kind"] == "tor" else _director_leaves(ctx, s, p)
            _chip_ports(ctx, s, p, leaves)
            switches.append(
                Switch(
                    s["name"],
                    s["kind"],
                    f["name"],
                    tuple(leaves),
                    s.get("spines", 0),
                    s.get("guid", ""),
                    tuple(s.get("spine_guids", ())),
                    switch_rates(ctx, s, p, f["role"]),
                )
            )
        choice = _opensm(ctx, f, ("fabrics", fi), switches) if "opensm" in f else None
        out.append(Fabric(f["name"], f["role"], tuple(switches), opensm=choice))
    fabric_names.report(ctx)
    switch_names.report(ctx)
    by_name: dict[str, Switch] = {}
    roles: dict[str, str] = {}
    for fabric in out:
        roles.setdefault(fabric.name, fabric.role)
        for sw in fabric.switches:
            by_name.setdefault(sw.name, sw)
    return Fabrics(tuple(out), by_name, roles)


def _opensm(
    ctx: Context, f: dict[str, Any], p: Path, switches: list[Switch]
) -> OpenSMChoice | None:
    """``fabrics[].opensm``: the settings ``fabric check`` measured and the site chose.  A
    guid file that could not be written for this fabric is reported (E-OPENSM); so is a
    ``measured`` text with a character that does not print (E-SCHEMA: opensm.conf carries it
    as a comment, where a line break would start a setting), as the inventory's other free text
    is (:mod:`lnetgen.inventory.text`), line breaks and tabs included; settings without one
    are written but warned about (W-OPENSM-UNMEASURED)."""
    spec = f["opensm"]
    q: Path = (*p, "opensm")
    ok = True
    if spec.get("cn_guid_file") and f["role"] != "compute":
        ctx.err(
            (*q, "cn_guid_file"),
            "E-OPENSM",
            f"fabric {f['name']} is a storage fabric: lnetgen writes no cn_guid_file there "
            "(every CA that is not a server must stay a compute node)",
        )
        ok = False
    if spec.get("root_guid_file"):
        directors = [sw for sw in switches if sw.kind == "director" and sw.spines]
        if not directors or any(len(sw.spine_guids) < sw.spines for sw in directors):
            ctx.err(
                (*q, "root_guid_file"),
                "E-OPENSM",
                f"fabric {f['name']} has no complete list of spine GUIDs (spine_guids of every "
                "director), so lnetgen cannot write a root_guid_file",
            )
            ok = False
    measured = spec.get("measured", "")
    bad = next((c for c in measured if not c.isprintable()), None)
    if bad is not None:
        ctx.err(
            (*q, "measured"),
            "E-SCHEMA",
            f"{show(measured)} holds the character U+{ord(bad):04X}, which does not print "
            "(a control or format character, or a line break)",
            hint="measured is one line of printable characters: opensm.conf carries it as a "
            "comment",
        )
        ok = False
    if not ok:
        return None
    if not measured:
        ctx.warn(
            q,
            "W-OPENSM-UNMEASURED",
            f"fabric {f['name']} records OpenSM settings with no measurement: generate writes "
            "them, but opensm.conf cannot say what they were measured to do",
            hint=f"`lnetgen fabric check SITE --fabric {f['name']}` measures them and prints "
            "the opensm line to record, measured: included",
        )
    return OpenSMChoice(
        bool(spec.get("io_guid_file", False)),
        bool(spec.get("cn_guid_file", False)),
        bool(spec.get("root_guid_file", False)),
        int(spec.get("max_reverse_hops", 0)),
        measured,
    )


def _chip_ports(ctx: Context, s: dict[str, Any], p: Path, leaves: list[Leaf]) -> None:
    """E-SWITCH for a chip with more ports than InfiniBand numbers (``MAX_SWITCH_PORTS``): a
    TOR's ports, a leaf module's external ports plus its uplinks (cabled when the director has
    spines), a spine's share of the uplinks (dealt round-robin, as ``lnetgen.fabric`` cables
    them).  ``fabric export`` and ``fabric check`` could not lay such a switch out."""
    spines = int(s.get("spines", 0)) if s["kind"] == "director" else 0
    for li, lf in enumerate(leaves):
        need = lf.ports + (lf.uplinks if spines else 0)
        if need <= MAX_SWITCH_PORTS:
            continue
        if s["kind"] == "tor":
            where: Path = (*p, "ports")
            what = f"top-of-rack switch {s['name']} has {lf.ports} ports"
        else:
            where = (*p, "leaves") if isinstance(s["leaves"], dict) else (*p, "leaves", li)
            what = f"leaf module {s['name']}/{lf.name} has {lf.ports} external ports"
            if spines:
                what += f" + {lf.uplinks} uplinks"
        ctx.err(
            where,
            "E-SWITCH",
            f"{what}: an InfiniBand switch chip has at most {MAX_SWITCH_PORTS} ports",
        )
        return  # identical modules of a count would all say the same
    if spines:
        need = sum(-(-lf.uplinks // spines) for lf in leaves)
        if need > MAX_SWITCH_PORTS:
            ctx.err(
                (*p, "spines"),
                "E-SWITCH",
                f"the leaf uplinks of {s['name']} give each of its {spines} spine(s) up to "
                f"{need} ports: an InfiniBand switch chip has at most {MAX_SWITCH_PORTS} "
                "(more spines, or fewer uplinks)",
            )


def _tor_leaf(ctx: Context, s: dict[str, Any], p: Path) -> list[Leaf]:
    """A top-of-rack switch as one nameless leaf with its external ports (the switch's GUID is
    its chip's: ``lnetgen.fabric`` lays it out so)."""
    for key in ("leaves", "spines", "spine_guids"):
        if s.get(key):
            ctx.err(
                (*p, key),
                "E-SWITCH",
                f"{s['name']} is a top-of-rack switch: it has no {key}; "
                "give 'ports' (and 'uplinks')",
            )
    if "ports" not in s:
        ctx.err(
            p,
            "E-SWITCH",
            f"top-of-rack switch {s['name']} needs 'ports' (its number of external ports)",
        )
        return []
    return [Leaf("", s["ports"], s.get("uplinks", 0))]


def _director_leaves(ctx: Context, s: dict[str, Any], p: Path) -> list[Leaf]:
    """The leaf modules of a director; its spines may be 0 (one module, or not known)."""
    for key in ("ports", "uplinks"):
        if key in s:
            ctx.err(
                (*p, key),
                "E-SWITCH",
                f"{s['name']} is a director switch: give '{key}' per leaf module under 'leaves'",
            )
    guids = s.get("spine_guids")
    if guids is not None and len(guids) > s.get("spines", 0):
        # fewer is allowed (not every spine GUID may be known); more cannot be right
        ctx.err(
            (*p, "spine_guids"),
            "E-SWITCH",
            f"{s['name']} lists {len(guids)} spine GUID(s) for {s.get('spines', 0)} spine(s)",
        )
    spec = s.get("leaves")
    if spec is None:
        ctx.err(
            p,
            "E-SWITCH",
            f"director switch {s['name']} needs 'leaves' "
            "(e.g. {count: 24, ports: 12, uplinks: 12})",
        )
        return []
    if isinstance(spec, dict):
        width = max(2, len(str(spec["count"])))
        prefix = spec.get("prefix", "L")
        ports = int(spec["ports"])
        return [
            Leaf(f"{prefix}{i:0{width}d}", ports, int(spec.get("uplinks", ports)))
            for i in range(1, spec["count"] + 1)
        ]
    leaves = []
    names = Registry.of_names()
    for li, lf in enumerate(spec):
        lp: Path = (*p, "leaves", li)
        names.claim(lf["name"], (*lp, "name"), "leaf")
        if "guid" in lf:
            ctx.guid(lf["guid"], (*lp, "guid"), f"leaf {s['name']}/{lf['name']}", "chip")
        ports = int(lf["ports"])
        leaves.append(Leaf(lf["name"], ports, int(lf.get("uplinks", ports)), lf.get("guid", "")))
    names.report(ctx)
    return leaves
