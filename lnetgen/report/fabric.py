"""The storage fabric picture: each switch with its leaf modules, the routers and servers on
their ports coloured by storage LNet, and a bar per module for the flows crossing the spine.

At most ``max_switches`` switch boxes are drawn per strategy (the busiest first, dealt
round-robin over the fabrics); the rest of each fabric is summarized in one note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lnetgen import nodes
from lnetgen.analyze import Analysis
from lnetgen.model import Fabric, Rail, Site, Switch
from lnetgen.plan import Plan
from lnetgen.report.data import FabricView
from lnetgen.report.solved import Solved
from lnetgen.report.svg import (
    PAGE_WIDTH,
    Circle,
    Line,
    Poly,
    Rect,
    Shape,
    Svg,
    Text,
    coord,
    fmt,
    pct,
    shift,
    some,
)

#: Colour classes: storage nets cycle through ``n0``..``n11``.
NET_COLOURS = 12

_PORT = 12  # px per switch port
_RISER = 30  # px above a leaf module for its spine-crossing bar


def riser_scale(solved: Sequence[Solved]) -> float:
    """The top of the spine-crossing bars, shared by every strategy: flows on the busiest
    uplink of any module, one direction."""
    return max(
        [
            max(
                (
                    max(lf.up, lf.down) / lf.uplinks
                    for ph in (s.analysis.fabric.writes, s.analysis.fabric.reads)
                    for lf in ph.leaves
                ),
                default=0.0,
            )
            for s in solved
        ]
        + [0.0]
    )


def fabric_headline(a: Analysis) -> str:
    """How much traffic crosses a spine, in one sentence."""
    fw, fr = a.fabric.writes, a.fabric.reads
    headline = (
        f"{pct(fw.fraction)} of {fmt(fw.served, 1)} write flows and {pct(fr.fraction)} of "
        f"{fmt(fr.served, 1)} read flows cross a spine; "
        f"{a.fabric.crossing_routes} of {a.fabric.routes} router-server pairs in use cross"
    )
    if fw.max_uplink > 0:
        headline += (
            f"; busiest uplink {fmt(fw.max_uplink)} write flows ({fw.max_leaf}), "
            f"max/mean {fmt(fw.imbalance)}"
        )
    if a.lost_writes or a.lost_reads:
        headline += (
            f"; unserved: {fmt(a.lost_writes, 1)} write and {fmt(a.lost_reads, 1)} read flows"
        )
    return headline


# ---------------------------------------------------------------------------- hosts and modules


@dataclass(frozen=True)
class _Host:
    name: str
    role: str  # router | oss | mds
    port: int
    net: str  # the colour's net ('' = idle router)
    title: str


def _net_colour(plan: Plan) -> dict[str, int]:
    return {n.name: i % NET_COLOURS for i, n in enumerate(plan.storage_nets())}


def _hosts(site: Site, s: Solved) -> dict[tuple[str, str], list[_Host]]:
    """Hosts per (switch, leaf) module of the storage fabrics, by port."""
    plan = s.plan
    primary: dict[str, list[str]] = {}
    for network in plan.storage_nets():
        for name in network.primary_routers:
            primary.setdefault(name, []).append(network.name)
    group = {n.name: n.group for n in plan.storage_nets()}

    def of_group(net: str) -> str:
        return f" (group {group[net]})" if group.get(net) else ""

    rplan = {rp.name: rp for rp in plan.routers}
    served = dict(zip(s.ix.routers, s.served.tolist(), strict=True))
    out: dict[tuple[str, str], list[_Host]] = {}
    for r in site.routers:
        rp = rplan.get(r.name)
        nets = [n for n in (rp.networks if rp else ()) if n in group]
        own = sorted(primary.get(r.name, []))
        net = own[0] if own else ""
        backup = [n for n in nets if n not in own]
        where = f"{r.attach.label()} port {r.attach.port}"
        title = f"router {r.name} at {where}"
        if own:
            title += f"; primary for {', '.join(own)}" + of_group(net)
        else:
            title += "; not a priority-0 gateway of any storage net"
        if backup:
            title += f"; also on {some(backup)}"
        title += f"; serves {served.get(r.name, 0)} clients"
        if r.coords is not None:
            title += f"; torus ({r.coords[0]},{r.coords[1]},{r.coords[2]})"
        out.setdefault(r.attach.module, []).append(
            _Host(r.name, "router", r.attach.port, net, title)
        )
        _rails(out, r.name, "router", r.rails, net)
    splan = {sv.name: sv for sv in plan.servers}
    for sv in site.servers:
        sp = splan.get(sv.name)
        net = sp.net if sp else ""
        title = (
            f"{sv.role.upper()} {sv.name} ({sv.fs}) at {sv.attach.label()} port {sv.attach.port}"
        )
        if net:
            title += f" on {net}" + of_group(net)
        if sv.osts:
            title += f"; {len(sv.osts)} OSTs"
        out.setdefault(sv.attach.module, []).append(
            _Host(sv.name, sv.role, sv.attach.port, net, title)
        )
        _rails(out, sv.name, sv.role, sv.rails, net)
    for hosts in out.values():
        hosts.sort(key=lambda h: (h.port, h.name))
    return out


def _rails(
    out: dict[tuple[str, str], list[_Host]], name: str, role: str, rails: tuple[Rail, ...], net: str
) -> None:
    """The Multi-Rail ports of a host, each drawn at its own port (same leaf module)."""
    for k, x in enumerate(rails):
        where = f"{x.attach.label()} port {x.attach.port}"
        title = f"{name} rail {k + 1} ({x.interface}, {x.ip}) at {where}"
        out.setdefault(x.attach.module, []).append(_Host(name, role, x.attach.port, net, title))


def _grid(sw: Switch, ports: int) -> tuple[int, int]:
    """(columns, rows) of a module's port grid: a director's leaf is a column of port pairs, a
    TOR switch a row of them (two rows of ports)."""
    pairs = max(math.ceil(ports / 2), 1)
    return (2, pairs) if sw.kind == "director" else (pairs, 2)


def _port_xy(sw: Switch, port: int) -> tuple[int, int]:
    i = max(port - 1, 0)
    return (i % 2, i // 2) if sw.kind == "director" else (i // 2, i % 2)


@dataclass(frozen=True)
class _Module:
    label: str  # switch/leaf, or the switch for a TOR switch
    leaf: str  # '' for a TOR switch
    ports: int
    uplinks: int
    hosts: tuple[_Host, ...]
    w_up: float
    w_down: float
    r_up: float
    r_down: float

    @property
    def crossing(self) -> float:
        """Flows on the busiest uplink of the module, one direction, writes or reads."""
        up = max(self.w_up, self.w_down, self.r_up, self.r_down)
        return up / max(self.uplinks, 1)

    @property
    def routers(self) -> int:
        return sum(1 for h in self.hosts if h.role == "router")

    @property
    def servers(self) -> int:
        return len(self.hosts) - self.routers


def _modules(sw: Switch, hosts: dict[tuple[str, str], list[_Host]], s: Solved) -> list[_Module]:
    fb = s.analysis.fabric
    wl = {lf.leaf: lf for lf in fb.writes.leaves}
    rl = {lf.leaf: lf for lf in fb.reads.leaves}
    out = []
    for leaf in sw.leaves:
        label = f"{sw.name}/{leaf.name}" if leaf.name else sw.name
        w, r = wl.get(label), rl.get(label)
        out.append(
            _Module(
                label,
                leaf.name,
                leaf.ports,
                max(leaf.uplinks, 1),
                tuple(hosts.get((sw.name, leaf.name), [])),
                w.up if w else 0.0,
                w.down if w else 0.0,
                r.up if r else 0.0,
                r.down if r else 0.0,
            )
        )
    return out


# ---------------------------------------------------------------------------- drawing


def _module_shapes(
    sw: Switch, m: _Module, bx: float, by: float, colour: dict[str, int], vmax: float
) -> list[Shape]:
    """One module's port grid at ``(bx, by)``, its hosts, and its spine-crossing bar."""
    c, r = _grid(sw, m.ports)
    w, h = c * _PORT, r * _PORT
    nets = sorted({hh.net for hh in m.hosts if hh.net})
    mtitle = (
        f"{m.label}: {m.routers} routers, {m.servers} servers"
        + (f", nets {some(nets)}" if nets else "")
        + f"; over its {m.uplinks} uplink(s) writes go up {fmt(m.w_up, 1)} / down "
        f"{fmt(m.w_down, 1)} flows, reads up {fmt(m.r_up, 1)} / down {fmt(m.r_down, 1)}"
    )
    items: list[Shape] = [
        Rect(coord(bx - 2), coord(by - 2), w + 4, h + 4, "module" if m.hosts else "module empty")
    ]
    # spine-crossing bar: flows on the busiest uplink, up from the module
    cx = bx + w / 2
    load = m.crossing
    if load > 1e-9 and vmax > 0:
        bh = max((_RISER - 12) * load / vmax, 1.5)
        items.append(Rect(coord(cx - 4), coord(by - 3 - bh), 8, coord(bh), "riser", mtitle))
        items.append(Text(coord(cx), coord(by - 5 - bh), fmt(load, 1), "riser-v", "middle"))
    else:
        items.append(Line(coord(cx), coord(by - 3), coord(cx), coord(by - _RISER + 8), "riser0"))
    for p in range(1, m.ports + 1):
        px, py = _port_xy(sw, p)
        items.append(Rect(bx + px * _PORT + 1, by + py * _PORT + 1, _PORT - 2, _PORT - 2, "port"))
    for hh in m.hosts:
        px, py = _port_xy(sw, hh.port)
        x0, y0 = bx + px * _PORT, by + py * _PORT
        cls = f"n{colour[hh.net]}" if hh.net in colour else "idle"
        if hh.role == "router":
            items.append(Circle(coord(x0 + _PORT / 2), coord(y0 + _PORT / 2), 4.6, cls, hh.title))
        elif hh.role == "mds":
            c0, c1 = x0 + _PORT / 2, y0 + _PORT / 2
            pts = ((c0, c1 - 5.5), (c0 + 5.5, c1), (c0, c1 + 5.5), (c0 - 5.5, c1))
            items.append(Poly(tuple((coord(a), coord(b)) for a, b in pts), cls, hh.title))
        else:
            items.append(Rect(x0 + 1.5, y0 + 1.5, _PORT - 3, _PORT - 3, cls, hh.title))
    if m.leaf:
        items.append(Text(coord(cx), coord(by + h + 13), m.leaf, "leaf-name", "middle"))
    return items


def _cross_note(s: Solved, sw: Switch) -> str:
    """The switch box's note: the write and read flows that cross ``sw``'s spine (or a TOR
    switch's uplinks) -- those with an end on it whose router and server sit on different
    leaf modules (:class:`lnetgen.analyze.fabric.SwitchCrossing`) -- of all the flows.  On a
    fabric of one switch they are the headline's crossing flows; a flow between switches
    crosses both.  The box used to print the sum over its modules of max(up, down), an
    uplink load and no count of flows: 24.8 flows crossing of 24.0 in all on reviewer F's
    site, whose headline said 75.8 % (18.2)."""
    fb = s.analysis.fabric
    w = {c.switch: c.flows for c in fb.writes.switches}.get(sw.name, 0.0)
    r = {c.switch: c.flows for c in fb.reads.switches}.get(sw.name, 0.0)
    what = "spine" if sw.kind == "director" else "uplinks"
    if w > 1e-9 or r > 1e-9:
        return (
            f"{what}: {fmt(w, 1)} of {fmt(fb.writes.served, 1)} write, {fmt(r, 1)} of "
            f"{fmt(fb.reads.served, 1)} read flows cross"
        )
    return f"{sw.kind}; nothing crosses the {what}"


def _switch_box(
    sw: Switch, mods: list[_Module], colour: dict[str, int], vmax: float, note: str
) -> tuple[float, float, list[Shape]]:
    """Shapes of one switch box at the origin, and its width and height; ``note`` is the line
    under its name (:func:`_cross_note`)."""
    pad, head, band = 8, 30, 6
    what = "spine" if sw.kind == "director" else "uplinks"
    # module blocks, wrapped into rows
    blocks: list[tuple[float, float, _Module]] = []  # x, y (of the port grid), module
    gap = 10 if sw.kind == "director" else 14
    x, y = float(pad + 2), float(pad + head + band + _RISER)
    row_h = 0.0
    max_w = 0.0
    for m in mods:
        c, r = _grid(sw, m.ports)
        w, h = c * _PORT, r * _PORT
        if blocks and x + w > PAGE_WIDTH - 3 * pad:
            x = float(pad + 2)
            y += row_h + 16 + _RISER
            row_h = 0.0
        blocks.append((x, y, m))
        max_w = max(max_w, x + w)
        x += w + gap
        row_h = max(row_h, h)
    total_w = max(max_w + pad + 2, pad * 2 + 7.6 * len(sw.name), pad * 2 + 6.0 * len(note))
    total_h = y + row_h + (16 if any(m.leaf for m in mods) else 6) + pad
    items: list[Shape] = [
        Rect(0, 0, coord(total_w), coord(total_h), "switch"),
        Text(pad, pad + 11, sw.name, "sw-name"),
        Text(pad, pad + 24, note, "sw-note"),
        Rect(pad, pad + head, coord(total_w - 2 * pad), band, "spine", f"{sw.name} {what}"),
    ]
    for bx, by, m in blocks:
        items.extend(_module_shapes(sw, m, bx, by, colour, vmax))
    return total_w, total_h, items


def _choose(
    fabrics: Sequence[Fabric], mods: dict[str, list[_Module]], max_switches: int
) -> list[set[int]]:
    """Which switches to draw, per fabric by index: the busiest (spine crossing: busiest
    uplink, then all uplinks) first, then inventory order; the budget is dealt round-robin
    over the fabrics so each gets some."""

    def busy(sw: Switch) -> tuple[float, float]:
        loads = [m.crossing for m in mods[sw.name]]
        return (-round(max(loads, default=0.0), 6), -round(sum(loads), 6))

    ranked = [
        [i for _b, i in sorted((busy(sw), i) for i, sw in enumerate(f.switches))] for f in fabrics
    ]
    chosen: list[set[int]] = [set() for _ in fabrics]
    budget = max_switches
    depth = 0
    while budget > 0 and any(depth < len(r) for r in ranked):
        for fi, r in enumerate(ranked):
            if depth < len(r) and budget > 0:
                chosen[fi].add(r[depth])
                budget -= 1
        depth += 1
    return chosen


def _rest_note(rest: Sequence[Switch], mods: dict[str, list[_Module]]) -> str:
    """One line on the switches of a fabric that are not drawn."""
    rmods = [m for sw in rest for m in mods[sw.name]]
    busiest = max(rmods, key=lambda m: m.crossing, default=None)
    note = (
        f"{len(rest)} more switch(es) not drawn ({nodes.fold([sw.name for sw in rest])}): "
        f"{sum(m.routers for m in rmods)} routers, {sum(m.servers for m in rmods)} servers"
    )
    if busiest is not None and busiest.crossing > 1e-9:
        note += f"; their busiest uplink carries {fmt(busiest.crossing)} flows"
    else:
        note += "; no flow crosses their uplinks"
    return note


def fabric_views(site: Site, s: Solved, max_switches: int, vmax: float) -> tuple[FabricView, ...]:
    """The storage fabrics of one strategy, switch boxes wrapped into rows; ``vmax`` is the
    shared top of the spine-crossing bars."""
    colour = _net_colour(s.plan)
    hosts = _hosts(site, s)
    fabrics = [f for f in site.fabrics if f.role == "storage"]
    mods = {sw.name: _modules(sw, hosts, s) for f in fabrics for sw in f.switches}
    chosen = _choose(fabrics, mods, max_switches)
    out: list[FabricView] = []
    for fi, f in enumerate(fabrics):
        items: list[Shape] = []
        x = y = 0.0
        row_h = 0.0
        width = 0.0
        for i in sorted(chosen[fi]):
            sw = f.switches[i]
            w, h, shapes = _switch_box(sw, mods[sw.name], colour, vmax, _cross_note(s, sw))
            if x > 0 and x + w > PAGE_WIDTH:
                x = 0.0
                y += row_h + 12
                row_h = 0.0
            items.extend(shift(shape, x, y) for shape in shapes)
            width = max(width, x + w)
            x += w + 12
            row_h = max(row_h, h)
        rest = [sw for i, sw in enumerate(f.switches) if i not in chosen[fi]]
        notes = (_rest_note(rest, mods),) if rest else ()
        svg = (
            Svg(coord(width), coord(y + row_h), f"storage fabric {f.name}", tuple(items))
            if items
            else None
        )
        out.append(FabricView(f.name, svg, notes))
    return tuple(out)


def fabric_legend() -> Svg:
    """The key to the storage fabric pictures: host shapes, net colours, the crossing bar."""
    items: list[Shape] = []
    x = 4.0
    items.append(Circle(x + 6, 10, 4.6, "n0"))
    items.append(Text(x + 16, 14, "LNet router", "legend"))
    x += 96
    items.append(Rect(x + 1.5, 4.5, 9, 9, "n1"))
    items.append(Text(x + 16, 14, "OSS", "legend"))
    x += 52
    items.append(Poly(((x + 6, 4.5), (x + 11.5, 10), (x + 6, 15.5), (x + 0.5, 10)), "n2"))
    items.append(Text(x + 16, 14, "MDS", "legend"))
    x += 52
    items.append(Circle(x + 6, 10, 4.6, "idle"))
    items.append(Text(x + 16, 14, "router with no net of its own", "legend"))
    x += 200
    for k in range(NET_COLOURS):
        items.append(Rect(x + 12 * k, 4, 10, 10, f"n{k}"))
    x += 12 * NET_COLOURS + 6
    items.append(Text(x, 14, "storage LNet (12 colours, cycling in net order)", "legend"))
    x += 300
    items.append(Rect(x, 2, 8, 14, "riser"))
    items.append(Text(x + 14, 14, "flows on the busiest uplink (spine crossing)", "legend"))
    return Svg(PAGE_WIDTH, 20, "legend of the storage fabric pictures", tuple(items))
