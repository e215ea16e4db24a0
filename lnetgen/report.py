"""The HTML report: a site's storage fabric, torus link loads, load histograms and failure
summary as one self-contained HTML file with inline SVG (no script, nothing fetched).

Everything a picture needs -- coordinates, colour classes, histogram bins, tick labels -- is
computed here into plain frozen dataclasses (:class:`Report`, :class:`Svg` and its shapes); the
templates under ``templates/report/`` only loop over them and format numbers.  Every string
that reaches the page is escaped by the template environment (autoescape on), so names from the
inventory cannot inject markup.

Big sites are aggregated, not drawn point by point: clients appear only as torus link loads,
at most ``max_slices`` X-Y slices of the torus are drawn per direction (the most loaded ones,
after a max-over-Z overview), and at most ``max_switches`` switch boxes per strategy (the rest
are summarized in one line per fabric).

Public entry points: :func:`build_report` (site and strategies -> :class:`Report`),
:func:`render_html` (:class:`Report` -> HTML text), :func:`link_load_arrays` (the torus link
loads of a plan as two (X, Y, Z, 6) arrays) and :func:`clients_per_router`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

import jinja2
import numpy as np
import numpy.typing as npt

from lnetgen import __version__, analyze, nodes, topology
from lnetgen.diagnostics import Diagnostic
from lnetgen.emit.base import make_environment
from lnetgen.model import Site, Switch
from lnetgen.plan import Plan

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Default caps: switch boxes drawn per strategy, torus slices drawn per direction.
MAX_SWITCHES = 24
MAX_SLICES = 6
#: The same caps per strategy in ``--compare`` mode (every strategy gets its own pictures).
COMPARE_MAX_SWITCHES = 8
COMPARE_MAX_SLICES = 2
#: Colour classes: storage nets cycle through ``n0``..``n11``; heat bins ``h1``..``h9``
#: (``h0`` = no load).
NET_COLOURS = 12
HEAT_BINS = 9
#: Width (px) the pictures are laid out for.
PAGE_WIDTH = 1320

_PORT = 12  # px per switch port
_RISER = 30  # px above a leaf module for its spine-crossing bar


# ============================================================================ shapes


@dataclass(frozen=True)
class Rect:
    kind: ClassVar[str] = "rect"
    x: float
    y: float
    w: float
    h: float
    cls: str = ""
    title: str = ""


@dataclass(frozen=True)
class Circle:
    kind: ClassVar[str] = "circle"
    x: float
    y: float
    r: float
    cls: str = ""
    title: str = ""


@dataclass(frozen=True)
class Poly:
    """A closed polygon, ``points`` as ``(x, y)`` pairs."""

    kind: ClassVar[str] = "poly"
    points: tuple[tuple[float, float], ...]
    cls: str = ""
    title: str = ""


@dataclass(frozen=True)
class Line:
    kind: ClassVar[str] = "line"
    x1: float
    y1: float
    x2: float
    y2: float
    cls: str = ""


@dataclass(frozen=True)
class Text:
    kind: ClassVar[str] = "text"
    x: float
    y: float
    text: str
    cls: str = ""
    anchor: str = "start"  # start | middle | end


Shape = Rect | Circle | Poly | Line | Text


@dataclass(frozen=True)
class Svg:
    """One inline picture: size in px, an accessible label, shapes in drawing order."""

    width: float
    height: float
    label: str
    items: tuple[Shape, ...]


# ============================================================================ report data


@dataclass(frozen=True)
class Table:
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]  # right-align this column


@dataclass(frozen=True)
class Figure:
    """A picture with a heading above and a caption below."""

    title: str
    svg: Svg
    caption: str = ""


@dataclass(frozen=True)
class FabricView:
    name: str
    svg: Svg | None
    notes: tuple[str, ...]  # what is not drawn, in words


@dataclass(frozen=True)
class TorusPhase:
    name: str  # writes | reads
    headline: str
    maps: tuple[Figure, ...]  # overview first, then the slices


@dataclass(frozen=True)
class FailureView:
    headline: str
    worst: Table | None


@dataclass(frozen=True)
class StrategyView:
    strategy: str
    error: str
    headline: str
    fabrics: tuple[FabricView, ...]
    torus: tuple[TorusPhase, ...]
    router_hist: Figure | None
    link_hist: Figure | None
    failure: FailureView | None
    findings: tuple[tuple[str, str, int], ...]  # code, message, count


@dataclass(frozen=True)
class Message:
    severity: str
    code: str
    where: str
    text: str


@dataclass(frozen=True)
class Report:
    title: str
    site: str
    description: str
    version: str
    digest: str
    mode: str  # single | compare
    facts: tuple[tuple[str, str], ...]  # (label, value) about the site
    model: str  # the traffic model in one sentence
    summary: Table
    failure_chart: Figure | None
    views: tuple[StrategyView, ...]
    heat_legend: Svg | None
    fabric_legend: Svg
    warnings: tuple[Message, ...]
    compute_note: str


# ============================================================================ computation


def link_load_arrays(
    ix: analyze.PlanIndex, fail: Sequence[str] = ()
) -> tuple[FloatArray, FloatArray] | None:
    """Flows per directed torus link, writes and reads, each (X, Y, Z, 6): the loads
    ``analyze`` summarizes (``analyze.link_load_arrays``).  None without a torus."""
    return analyze.link_load_arrays(ix, fail)


def clients_per_router(ix: analyze.PlanIndex) -> IntArray:
    """Clients each router serves (members of a class with a priority-0 route through it,
    counted once however many nets it carries for them), in plan router order."""
    R = len(ix.routers)
    sh = analyze.client_shares(ix)
    ok = sh.router >= 0
    cls = sh.key[ok] // max(len(ix.nets), 1)
    pairs = np.unique(cls * max(R, 1) + sh.router[ok])
    served = np.bincount(pairs % max(R, 1), weights=ix.class_count[pairs // max(R, 1)], minlength=R)
    return np.asarray(np.rint(served), dtype=np.int64)


@dataclass(frozen=True, eq=False)
class _Solved:
    """One strategy, solved and analyzed."""

    name: str
    plan: Plan
    ix: analyze.PlanIndex
    analysis: analyze.Analysis
    loads: tuple[FloatArray, FloatArray] | None
    served: IntArray


def _solve_all(
    site: Site, strategies: Sequence[str], settings: analyze.Settings
) -> list[_Solved | tuple[str, str]]:
    from lnetgen.solve import solve
    from lnetgen.strategies import SolveError

    out: list[_Solved | tuple[str, str]] = []
    for name in strategies:
        try:
            plan = solve(site, name)
        except SolveError as exc:
            out.append((name, "; ".join(d.message for d in exc.diagnostics)))
            continue
        ix = analyze.index_plan(site, plan, settings)
        a = analyze.analyze(site, plan, settings=settings, index=ix, torus=False)
        out.append(_Solved(name, plan, ix, a, link_load_arrays(ix), clients_per_router(ix)))
    return out


# ============================================================================ formatting


def _f(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}"


def _span(v: IntArray) -> str:
    return f"{int(v.min())}-{int(v.max())}" if len(v) else "-"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _n(x: float) -> float:
    """A coordinate rounded to 0.1 px (short, deterministic text)."""
    return round(float(x), 1)


def _nice_step(span: float, target: int) -> float:
    if span <= 0:
        return 1.0
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return float(m * mag)
    return float(10 * mag)


def _ticks(hi: float, target: int = 4) -> list[float]:
    step = _nice_step(hi, target)
    n = math.floor(hi / step + 1e-9)
    return [round(i * step, 10) for i in range(n + 1)]


def _tick_text(v: float) -> str:
    if abs(v - round(v)) < 1e-9:
        return str(round(v))
    return f"{v:g}"


# ============================================================================ storage fabric


@dataclass(frozen=True)
class _Host:
    name: str
    role: str  # router | oss | mds
    port: int
    net: str  # the colour's net ('' = idle router)
    title: str


def _net_colour(plan: Plan) -> dict[str, int]:
    return {n.name: i % NET_COLOURS for i, n in enumerate(plan.storage_nets())}


def _hosts(site: Site, s: _Solved) -> dict[tuple[str, str], list[_Host]]:
    """Hosts per (switch, leaf) module of the storage fabrics, by port."""
    plan = s.plan
    primary: dict[str, list[str]] = {}
    for network in plan.storage_nets():
        for name in network.primary_routers:
            primary.setdefault(name, []).append(network.name)
    group = {n.name: n.group for n in plan.storage_nets()}
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
            title += f"; primary for {', '.join(own)}"
            if group.get(net):
                title += f" (group {group[net]})"
        else:
            title += "; not a priority-0 gateway of any storage net"
        if backup:
            title += f"; also on {_some(backup)}"
        title += f"; serves {served.get(r.name, 0)} clients"
        if r.coords is not None:
            title += f"; torus ({r.coords[0]},{r.coords[1]},{r.coords[2]})"
        out.setdefault(r.attach.module, []).append(
            _Host(r.name, "router", r.attach.port, net, title)
        )
    splan = {sv.name: sv for sv in plan.servers}
    for sv in site.servers:
        sp = splan.get(sv.name)
        net = sp.net if sp else ""
        title = (
            f"{sv.role.upper()} {sv.name} ({sv.fs}) at {sv.attach.label()} port {sv.attach.port}"
        )
        if net:
            title += f" on {net}"
            if group.get(net):
                title += f" (group {group[net]})"
        if sv.osts:
            title += f"; {len(sv.osts)} OSTs"
        out.setdefault(sv.attach.module, []).append(
            _Host(sv.name, sv.role, sv.attach.port, net, title)
        )
    for hosts in out.values():
        hosts.sort(key=lambda h: (h.port, h.name))
    return out


def _some(names: Sequence[str], limit: int = 6) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"


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


def _modules(
    site: Site, sw: Switch, hosts: dict[tuple[str, str], list[_Host]], s: _Solved
) -> list[_Module]:
    fb = s.analysis.fabric
    wl = {lf.leaf: lf for lf in fb.writes.leaves}
    rl = {lf.leaf: lf for lf in fb.reads.leaves}
    out = []
    for leaf in sw.leaves:
        label = f"{sw.name}/{leaf.name}" if leaf.name else sw.name
        w, r = wl.get(label), rl.get(label)
        out.append(
            _Module(
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


def _switch_box(
    sw: Switch, mods: list[_Module], colour: dict[str, int], vmax: float
) -> tuple[float, float, list[Shape]]:
    """Shapes of one switch box at the origin, and its width and height."""
    pad, head, band = 8, 30, 6
    items: list[Shape] = []
    w_cross = sum(max(m.w_up, m.w_down) for m in mods)
    r_cross = sum(max(m.r_up, m.r_down) for m in mods)
    what = "spine" if sw.kind == "director" else "uplinks"
    if w_cross > 1e-9 or r_cross > 1e-9:
        note = f"{what}: {_f(w_cross, 1)} write / {_f(r_cross, 1)} read flows cross"
    else:
        note = f"{sw.kind}; nothing crosses the {what}"
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
    items.append(Rect(0, 0, _n(total_w), _n(total_h), "switch"))
    items.append(Text(pad, pad + 11, sw.name, "sw-name"))
    items.append(Text(pad, pad + 24, note, "sw-note"))
    items.append(Rect(pad, pad + head, _n(total_w - 2 * pad), band, "spine", f"{sw.name} {what}"))
    for bx, by, m in blocks:
        c, r = _grid(sw, m.ports)
        w, h = c * _PORT, r * _PORT
        nets = sorted({hh.net for hh in m.hosts if hh.net})
        label = f"{sw.name}/{m.leaf}" if m.leaf else sw.name
        mtitle = (
            f"{label}: {sum(1 for hh in m.hosts if hh.role == 'router')} routers, "
            f"{sum(1 for hh in m.hosts if hh.role != 'router')} servers"
            + (f", nets {_some(nets)}" if nets else "")
            + f"; over its {m.uplinks} uplink(s) writes go up {_f(m.w_up, 1)} / down "
            f"{_f(m.w_down, 1)} flows, reads up {_f(m.r_up, 1)} / down {_f(m.r_down, 1)}"
        )
        items.append(
            Rect(_n(bx - 2), _n(by - 2), w + 4, h + 4, "module" if m.hosts else "module empty")
        )
        # spine-crossing bar: flows on the busiest uplink, up from the module
        cx = bx + w / 2
        load = m.crossing
        if load > 1e-9 and vmax > 0:
            bh = max((_RISER - 12) * load / vmax, 1.5)
            items.append(Rect(_n(cx - 4), _n(by - 3 - bh), 8, _n(bh), "riser", mtitle))
            items.append(Text(_n(cx), _n(by - 5 - bh), _f(load, 1), "riser-v", "middle"))
        else:
            items.append(Line(_n(cx), _n(by - 3), _n(cx), _n(by - _RISER + 8), "riser0"))
        for p in range(1, m.ports + 1):
            px, py = _port_xy(sw, p)
            items.append(
                Rect(bx + px * _PORT + 1, by + py * _PORT + 1, _PORT - 2, _PORT - 2, "port")
            )
        for hh in m.hosts:
            px, py = _port_xy(sw, hh.port)
            x0, y0 = bx + px * _PORT, by + py * _PORT
            cls = f"n{colour[hh.net]}" if hh.net in colour else "idle"
            if hh.role == "router":
                items.append(Circle(_n(x0 + _PORT / 2), _n(y0 + _PORT / 2), 4.6, cls, hh.title))
            elif hh.role == "mds":
                c0, c1 = x0 + _PORT / 2, y0 + _PORT / 2
                pts = ((c0, c1 - 5.5), (c0 + 5.5, c1), (c0, c1 + 5.5), (c0 - 5.5, c1))
                items.append(Poly(tuple((_n(a), _n(b)) for a, b in pts), cls, hh.title))
            else:
                items.append(Rect(x0 + 1.5, y0 + 1.5, _PORT - 3, _PORT - 3, cls, hh.title))
        if m.leaf:
            items.append(Text(_n(cx), _n(by + h + 13), m.leaf, "leaf-name", "middle"))
    return total_w, total_h, items


def _fabric_views(site: Site, s: _Solved, max_switches: int, vmax: float) -> tuple[FabricView, ...]:
    colour = _net_colour(s.plan)
    hosts = _hosts(site, s)
    fabrics = [f for f in site.fabrics if f.role == "storage"]
    mods = {sw.name: _modules(site, sw, hosts, s) for f in fabrics for sw in f.switches}

    # which switches to draw: per fabric the busiest (spine crossing: busiest uplink, then all
    # uplinks) first, then inventory order; the budget is dealt round-robin over the fabrics
    # so each gets some
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
    out: list[FabricView] = []
    for fi, f in enumerate(fabrics):
        items: list[Shape] = []
        x = y = 0.0
        row_h = 0.0
        width = 0.0
        for i in sorted(chosen[fi]):
            sw = f.switches[i]
            w, h, shapes = _switch_box(sw, mods[sw.name], colour, vmax)
            if x > 0 and x + w > PAGE_WIDTH:
                x = 0.0
                y += row_h + 12
                row_h = 0.0
            items.extend(_shift(shape, x, y) for shape in shapes)
            width = max(width, x + w)
            x += w + 12
            row_h = max(row_h, h)
        notes: list[str] = []
        rest = [sw for i, sw in enumerate(f.switches) if i not in chosen[fi]]
        if rest:
            rmods = [m for sw in rest for m in mods[sw.name]]
            busiest = max(rmods, key=lambda m: m.crossing, default=None)
            nr = sum(1 for m in rmods for h in m.hosts if h.role == "router")
            ns = sum(1 for m in rmods for h in m.hosts if h.role != "router")
            note = (
                f"{len(rest)} more switch(es) not drawn ({nodes.fold([sw.name for sw in rest])}): "
                f"{nr} routers, {ns} servers"
            )
            if busiest is not None and busiest.crossing > 1e-9:
                note += f"; their busiest uplink carries {_f(busiest.crossing)} flows"
            else:
                note += "; no flow crosses their uplinks"
            notes.append(note)
        svg = (
            Svg(_n(width), _n(y + row_h), f"storage fabric {f.name}", tuple(items))
            if items
            else None
        )
        out.append(FabricView(f.name, svg, tuple(notes)))
    return tuple(out)


def _shift(s: Shape, dx: float, dy: float) -> Shape:
    if dx == 0 and dy == 0:
        return s
    if isinstance(s, Rect):
        return Rect(_n(s.x + dx), _n(s.y + dy), s.w, s.h, s.cls, s.title)
    if isinstance(s, Circle):
        return Circle(_n(s.x + dx), _n(s.y + dy), s.r, s.cls, s.title)
    if isinstance(s, Poly):
        return Poly(tuple((_n(a + dx), _n(b + dy)) for a, b in s.points), s.cls, s.title)
    if isinstance(s, Line):
        return Line(_n(s.x1 + dx), _n(s.y1 + dy), _n(s.x2 + dx), _n(s.y2 + dy), s.cls)
    return Text(_n(s.x + dx), _n(s.y + dy), s.text, s.cls, s.anchor)


def _fabric_legend() -> Svg:
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


# ============================================================================ torus


def _heat_class(v: float, vmax: float, saturation: float) -> str:
    if v <= 1e-9:
        return "h0"
    b = min(HEAT_BINS, math.floor(HEAT_BINS * v / vmax) + 1) if vmax > 0 else 1
    return f"h{b} sat" if v > saturation + 1e-9 else f"h{b}"


def _cell_size(dims: tuple[int, int, int], big: bool) -> int:
    span = max(dims[0], dims[1])
    target = 300 if big else 170
    return int(min(28, max(4, target // max(span, 1))))


def _heat_map(
    heat: FloatArray,
    where: npt.NDArray[np.int64],
    label: str,
    vmax: float,
    saturation: float,
    routers: dict[tuple[int, int], list[str]],
    cell: int,
    z: int | None,
) -> Svg:
    """An X-Y map: ``heat[x, y]`` the busiest link leaving chip (x, y[, z]); ``where[x, y]``
    that link's index (direction, or ``z * 6 + direction`` for the max-over-Z overview)."""
    nx, ny = heat.shape
    left, top = 20, 6
    items: list[Shape] = []
    for x in range(nx):
        for y in range(ny):
            v = float(heat[x, y])
            k = int(where[x, y])
            if z is None:
                zz, d = divmod(k, 6)
                link = f"({x},{y},{zz}){topology.DIRECTIONS[d]}"
                title = f"x={x} y={y}: {_f(v)} flows, busiest link {link}"
            else:
                title = f"({x},{y},{z}) {topology.DIRECTIONS[k]} {_f(v)} flows"
            if v <= 1e-9:
                title = f"({x},{y}{'' if z is None else f',{z}'}) no flows"
            items.append(
                Rect(
                    left + x * cell,
                    top + y * cell,
                    cell,
                    cell,
                    _heat_class(v, vmax, saturation),
                    title,
                )
            )
    r = max(1.5, cell * 0.24)
    for (x, y), names in sorted(routers.items()):
        items.append(
            Circle(
                _n(left + (x + 0.5) * cell),
                _n(top + (y + 0.5) * cell),
                _n(r),
                "rtr",
                f"{_some(names, 4)} at x={x} y={y}" + ("" if z is None else f" z={z}"),
            )
        )
    w, h = left + nx * cell, top + ny * cell
    items.append(Text(left, h + 12, "0", "axis"))
    items.append(Text(w, h + 12, f"x={nx - 1}", "axis", "end"))
    items.append(Text(left - 3, top + 9, "0", "axis", "end"))
    items.append(Text(left - 3, h, f"{ny - 1}", "axis", "end"))
    items.append(Text(_n(left + nx * cell / 2), h + 12, "x →", "axis", "middle"))
    return Svg(w + 2, h + 16, label, tuple(items))


def _torus_phases(
    site: Site, s: _Solved, vmax: float, max_slices: int, big: bool
) -> tuple[TorusPhase, ...]:
    if s.loads is None or site.torus is None or s.ix.router_coords is None:
        return ()
    dims = site.torus.dims
    sat = s.analysis.settings.saturation
    cell = _cell_size(dims, big)
    rc = s.ix.router_coords
    by_chip: dict[tuple[int, int, int], list[str]] = {}
    for name, c in zip(s.ix.routers, rc.tolist(), strict=True):
        by_chip.setdefault((int(c[0]), int(c[1]), int(c[2])), []).append(name)
    by_col: dict[tuple[int, int], list[str]] = {}
    for (x, y, _z), names in sorted(by_chip.items()):
        by_col.setdefault((x, y), []).extend(names)
    out = []
    for name, loads in (("writes", s.loads[0]), ("reads", s.loads[1])):
        heat = loads.max(axis=3)  # (X, Y, Z)
        hdir = loads.argmax(axis=3)
        flat = heat.reshape(dims[0] * dims[1], dims[2])
        zbest = flat.argmax(axis=1)
        over = flat[np.arange(len(flat)), zbest].reshape(dims[0], dims[1])
        over_k = (zbest * 6 + hdir.reshape(-1, dims[2])[np.arange(len(flat)), zbest]).reshape(
            dims[0], dims[1]
        )
        zmax = heat.max(axis=(0, 1))
        zsum = heat.sum(axis=(0, 1))
        order = sorted(
            range(dims[2]), key=lambda z: (-round(float(zmax[z]), 9), -float(zsum[z]), z)
        )
        picked = sorted(order[:max_slices])
        what = "client -> router" if name == "writes" else "router -> client"
        maps = [
            Figure(
                f"{name}: all z",
                _heat_map(
                    over,
                    over_k,
                    f"{s.name} {name}: max over z",
                    vmax,
                    sat,
                    by_col,
                    cell,
                    None,
                ),
                f"max over the {dims[2]} z-slices",
            )
        ]
        for z in picked:
            maps.append(
                Figure(
                    f"{name}: z = {z}",
                    _heat_map(
                        heat[:, :, z],
                        hdir[:, :, z],
                        f"{s.name} {name}: slice z={z}",
                        vmax,
                        sat,
                        {(x, y): v for (x, y, zz), v in by_chip.items() if zz == z},
                        cell,
                        z,
                    ),
                    f"max {_f(float(zmax[z]))}",
                )
            )
        flat_l = loads.reshape(-1)
        saturated = int((flat_l > sat + 1e-9).sum())
        used = int((flat_l > 0).sum())
        skipped = dims[2] - len(picked)
        headline = (
            f"{name} ({what}): busiest link {_f(float(flat_l.max(initial=0.0)))} flows, "
            f"p99 {_f(float(np.percentile(flat_l, 99)) if len(flat_l) else 0.0)}, "
            f"{saturated} link(s) above saturation ({_f(sat)}); {used} of {len(flat_l)} "
            "links carry traffic"
        )
        if skipped:
            headline += (
                f"; showing the {len(picked)} most loaded of {dims[2]} z-slices "
                f"({', '.join(str(z) for z in picked)})"
            )
        out.append(TorusPhase(name, headline, tuple(maps)))
    return tuple(out)


def _heat_legend(vmax: float, saturation: float) -> Svg:
    items: list[Shape] = [Rect(4, 4, 22, 14, "h0"), Text(30, 15, "no flows", "legend")]
    x0, bw = 100.0, 34.0
    for b in range(1, HEAT_BINS + 1):
        lo, hi = vmax * (b - 1) / HEAT_BINS, vmax * b / HEAT_BINS
        items.append(
            Rect(x0 + (b - 1) * bw, 4, bw, 14, f"h{b}", f"{_f(lo)} to {_f(hi)} flows per link")
        )
    ticks = _ticks(vmax, 5)
    if vmax - ticks[-1] > 0.25 * (ticks[1] - ticks[0] if len(ticks) > 1 else vmax):
        ticks.append(round(vmax, 2))
    for t in ticks:
        x = x0 + bw * HEAT_BINS * (t / vmax if vmax else 0)
        items.append(Line(_n(x), 18, _n(x), 22, "tick"))
        items.append(Text(_n(x), 32, _tick_text(t), "axis", "middle"))
    x1 = x0 + bw * HEAT_BINS + 16
    items.append(Text(x1, 15, "flows on the busiest link leaving the chip", "legend"))
    items.append(Rect(x1 + 290, 4, 14, 14, "h9 sat"))
    items.append(Text(x1 + 310, 15, f"above saturation ({_f(saturation)} flows)", "legend"))
    items.append(Circle(x1 + 520, 11, 4.5, "rtr"))
    items.append(Text(x1 + 530, 15, "LNet router(s) on the chip", "legend"))
    return Svg(PAGE_WIDTH, 36, "colour scale of the torus maps", tuple(items))


# ============================================================================ histograms


def _bar_chart(
    label: str,
    edges: Sequence[float],
    series: Sequence[tuple[str, str, Sequence[int]]],
    ymax: int,
    log: bool,
    xlabel: str,
    vline: tuple[float, str] | None = None,
    width: int = 420,
    height: int = 190,
) -> Svg:
    """Bars per bin (``series``: name, colour class, counts per bin), grouped side by side."""
    left, right, top, bottom = 46, 10, 22, 34
    pw, ph = width - left - right, height - top - bottom
    lo, hi = edges[0], edges[-1]
    span = hi - lo or 1.0

    def sx(v: float) -> float:
        return left + pw * (v - lo) / span

    def sy(c: float) -> float:
        if c <= 0:
            return top + ph
        if log:
            return top + ph - ph * math.log10(1 + c) / math.log10(1 + max(ymax, 1))
        return top + ph - ph * c / max(ymax, 1)

    items: list[Shape] = [Rect(left, top, pw, ph, "plot")]
    # y grid and ticks
    yt = [10**k for k in range(int(math.log10(max(ymax, 1))) + 1)] if log else _ticks(ymax, 4)
    for t in yt:
        y = _n(sy(t))
        items.append(Line(left, y, left + pw, y, "grid"))
        items.append(Text(left - 4, _n(y + 3.5), _tick_text(t), "axis", "end"))
    nser = max(len(series), 1)
    for i in range(len(edges) - 1):
        x0, x1 = sx(edges[i]), sx(edges[i + 1])
        bw = (x1 - x0 - 1) / nser
        for j, (sname, cls, counts) in enumerate(series):
            c = counts[i]
            if c <= 0:
                continue
            y = sy(c)
            items.append(
                Rect(
                    _n(x0 + 0.5 + j * bw),
                    _n(y),
                    _n(max(bw, 0.8)),
                    _n(top + ph - y),
                    cls,
                    f"{sname}: {c} in [{_tick_text(round(edges[i], 4))}, "
                    f"{_tick_text(round(edges[i + 1], 4))})",
                )
            )
    for t in _ticks(hi - lo, 5):
        x = _n(sx(lo + t))
        items.append(Line(x, top + ph, x, top + ph + 4, "tick"))
        items.append(Text(x, top + ph + 15, _tick_text(lo + t), "axis", "middle"))
    items.append(Text(_n(left + pw / 2), height - 4, xlabel, "axis", "middle"))
    if vline is not None and lo <= vline[0] <= hi:
        x = _n(sx(vline[0]))
        items.append(Line(x, top - 4, x, top + ph, "vline"))
        items.append(Text(x, top - 7, vline[1], "axis", "middle"))
    lx = float(left)
    for sname, cls, _counts in series:
        items.append(Rect(_n(lx), 4, 10, 10, cls))
        items.append(Text(_n(lx + 14), 13, sname, "legend"))
        lx += 14 + 7 * len(sname) + 14
    return Svg(width, height, label, tuple(items))


def _router_edges(vmax: int) -> list[float]:
    if vmax <= 0:
        return [0.0, 1.0]
    step = max(1, math.ceil((vmax + 1) / 24))
    nb = math.ceil((vmax + 1) / step)
    return [float(i * step) for i in range(nb + 1)]


def _counts(values: npt.NDArray[Any], edges: Sequence[float]) -> list[int]:
    idx = np.searchsorted(np.asarray(edges[1:-1]), values, side="right")
    return [int(c) for c in np.bincount(idx, minlength=len(edges) - 1)]


def _router_hist(s: _Solved, edges: list[float], ymax: int, narrow: bool) -> Figure:
    v = s.served
    counts = _counts(v, edges)
    idle = int((v == 0).sum())
    mean = float(v.mean()) if len(v) else 0.0
    caption = (
        f"{len(v)} routers: min {int(v.min()) if len(v) else 0}, mean {_f(mean, 1)}, "
        f"max {int(v.max(initial=0))} clients" + (f"; {idle} serve no client" if idle else "")
    )
    svg = _bar_chart(
        f"{s.name}: clients per router",
        edges,
        [("routers", "bar-r", counts)],
        ymax,
        False,
        "clients served at priority 0",
        width=400 if narrow else 560,
    )
    return Figure(s.name if narrow else "clients per router", svg, caption)


def _link_hist(s: _Solved, edges: list[float], ymax: int, sat: float, narrow: bool) -> Figure:
    assert s.loads is not None
    w = s.loads[0].reshape(-1)
    r = s.loads[1].reshape(-1)
    cw = _counts(w[w > 0], edges)
    cr = _counts(r[r > 0], edges)
    caption = (
        f"{len(w)} directed links; idle: {int((w == 0).sum())} for writes, "
        f"{int((r == 0).sum())} for reads (not counted); log scale"
    )
    if sat > edges[-1]:
        caption += f"; saturation ({_f(sat)} flows) is beyond the axis"
    svg = _bar_chart(
        f"{s.name}: links per load",
        edges,
        [("writes", "bar-w", cw), ("reads", "bar-rd", cr)],
        ymax,
        True,
        "flows on a directed torus link",
        (sat, f"saturation {_f(sat)}"),
        width=400 if narrow else 560,
    )
    return Figure(s.name if narrow else "torus links per load", svg, caption)


# ============================================================================ failures


_N1_CLASSES = (
    ("lose a net", "f-lost"),
    ("fall back", "f-back"),
    ("degrade", "f-deg"),
    ("harmless", "f-ok"),
)


def _n1_buckets(nm: analyze.NMinus1) -> list[int]:
    out = [0, 0, 0, 0]
    for f in nm.routers:
        if f.lost or f.server_lost:
            out[0] += 1
        elif f.fallback or f.server_fallback:
            out[1] += 1
        elif f.degraded:
            out[2] += 1
        else:
            out[3] += 1
    return out


def _failure_chart(solved: Sequence[_Solved]) -> Figure | None:
    rows = [(s.name, _n1_buckets(s.analysis.n_minus_1)) for s in solved if s.analysis.n_minus_1]
    if not rows:
        return None
    left, bar, gap, width = 130, 20, 8, 760
    pw = width - left - 20
    items: list[Shape] = []
    y = 26.0
    for name, counts in rows:
        total = max(sum(counts), 1)
        x = float(left)
        items.append(Text(left - 8, _n(y + 14), name, "legend", "end"))
        for (what, cls), c in zip(_N1_CLASSES, counts, strict=True):
            if not c:
                continue
            w = pw * c / total
            items.append(Rect(_n(x), _n(y), _n(w), bar, cls, f"{name}: {c} router(s) {what}"))
            if w > 22:
                items.append(Text(_n(x + w / 2), _n(y + 14), str(c), "bar-v", "middle"))
            x += w
        y += bar + gap
    lx = float(left)
    for what, cls in _N1_CLASSES:
        items.append(Rect(_n(lx), 6, 10, 10, cls))
        items.append(
            Text(
                _n(lx + 14),
                15,
                f"failure alone makes some pair {what}"
                if what != "harmless"
                else "changes nothing",
                "legend",
            )
        )
        lx += (
            14
            + (7 * len(f"failure alone makes some pair {what}") if what != "harmless" else 110)
            + 16
        )
    return Figure(
        "single-router failures (N-1)",
        Svg(width, _n(y + 4), "routers by what their failure alone does", tuple(items)),
        "each router failed on its own: does some (client class, storage net) or (server "
        "group, client net) pair lose every route, fall back to a worse priority, or keep its "
        "priority with fewer gateways?",
    )


def _failure_view(s: _Solved, rows: int) -> FailureView | None:
    nm = s.analysis.n_minus_1
    if nm is None:
        return None
    buckets = _n1_buckets(nm)
    if nm.worst is None:
        headline = f"no single router failure changes any route ({len(nm.routers)} routers)"
    else:
        w = nm.worst
        headline = (
            f"worst single router {w.router}: {w.lost} clients x nets lost, {w.fallback} fall "
            f"back, {w.degraded} degraded; servers: {w.server_lost} lost, {w.server_fallback} "
            f"fall back.  {buckets[0]} of {len(nm.routers)} routers leave some pair without "
            f"a route, {buckets[1]} more force a fallback."
        )
    hurt = [
        f
        for f in nm.routers
        if f.lost or f.server_lost or f.fallback or f.server_fallback or f.degraded
    ]
    hurt.sort(key=lambda f: (-f.lost, -f.server_lost, -f.fallback, -f.server_fallback, -f.degraded))
    table = None
    if hurt:
        table = Table(
            (
                "router",
                "clients x nets lost",
                "fall back",
                "degraded",
                "servers lost",
                "servers fall back",
            ),
            tuple(
                (
                    f.router,
                    str(f.lost),
                    str(f.fallback),
                    str(f.degraded),
                    str(f.server_lost),
                    str(f.server_fallback),
                )
                for f in hurt[:rows]
            ),
            (False, True, True, True, True, True),
        )
    return FailureView(headline, table)


# ============================================================================ report


def _summary(site: Site, items: Sequence[_Solved | tuple[str, str]]) -> Table:
    rows = []
    torus = site.torus is not None
    for it in items:
        if isinstance(it, tuple):
            rows.append((it[0], "not solvable", *([""] * (8 if torus else 6))))
            continue
        a = it.analysis
        fw = a.fabric.writes
        nm = a.n_minus_1
        row = [
            it.name,
            str(len(it.ix.nets)),
            str(len(it.ix.classes)),
            _pct(fw.fraction),
            _f(fw.max_uplink, 1),
            _span(it.served),
        ]
        if torus and it.loads is not None:
            sat = a.settings.saturation
            row.append(f"{_f(float(it.loads[0].max()))} / {_f(float(it.loads[1].max()))}")
            row.append(
                str(int((it.loads[0] > sat + 1e-9).sum() + (it.loads[1] > sat + 1e-9).sum()))
            )
        elif torus:
            row.extend(["-", "-"])
        row.append(
            f"{nm.worst.lost} / {nm.worst.fallback}" if nm is not None and nm.worst else "0 / 0"
        )
        row.append(str(nm.routers_losing_a_net if nm is not None else 0))
        row.append(str(len(a.findings)))
        rows.append(tuple(row))
    head = [
        "strategy",
        "storage nets",
        "client classes",
        "spine crossing",
        "busiest uplink",
        "clients per router",
    ]
    if torus:
        head += ["torus max w / r", "saturated links"]
    head += ["N-1 worst lost / back", "routers losing a net", "findings"]
    return Table(
        tuple(head),
        tuple(rows),
        tuple(i > 0 for i in range(len(head))),
    )


def _warnings(diags: Sequence[Diagnostic]) -> tuple[Message, ...]:
    out = []
    for d in sorted(diags):
        where = os.path.basename(d.file) if d.file else "<input>"
        if d.line:
            where += f":{d.line}:{d.col or 1}"
        text = d.message + (f" (hint: {d.hint})" if d.hint else "")
        out.append(Message(d.severity, d.code, f"{where} {d.path}", text))
    return tuple(out)


def build_report(
    site: Site,
    strategies: Sequence[str],
    warnings: Sequence[Diagnostic] = (),
    *,
    settings: analyze.Settings | None = None,
    max_switches: int | None = None,
    max_slices: int | None = None,
) -> Report:
    """Solve ``site`` with each of ``strategies`` (one: a single-strategy report; more: the
    strategies side by side), analyze each plan, and lay out every picture.  ``warnings`` are
    the inventory's validation warnings, listed at the end.  A strategy that cannot be solved
    gets a row saying why.  Raises ``InputError`` when a plan does not match the site."""
    if not strategies:
        raise analyze.input_error("E-USAGE", "no strategy to report on")
    settings = settings or analyze.Settings()
    compare = len(strategies) > 1
    max_switches = (
        max_switches
        if max_switches is not None
        else (COMPARE_MAX_SWITCHES if compare else MAX_SWITCHES)
    )
    max_slices = (
        max_slices if max_slices is not None else (COMPARE_MAX_SLICES if compare else MAX_SLICES)
    )
    items = _solve_all(site, strategies, settings)
    solved = [it for it in items if isinstance(it, _Solved)]
    sat = settings.saturation
    # shared scales, so that strategies compare at a glance
    heat_max = max(
        [float(max(s.loads[0].max(), s.loads[1].max())) for s in solved if s.loads is not None]
        + [0.0]
    )
    riser_max = max(
        [
            max(
                (
                    max(lf.up, lf.down) / _leaf_uplinks(site, lf.leaf)
                    for ph in (s.analysis.fabric.writes, s.analysis.fabric.reads)
                    for lf in ph.leaves
                ),
                default=0.0,
            )
            for s in solved
        ]
        + [0.0]
    )
    r_edges = _router_edges(max([int(s.served.max(initial=0)) for s in solved] + [0]))
    r_ymax = max([max(_counts(s.served, r_edges)) for s in solved] + [1])
    l_hi = heat_max if heat_max > 0 else 1.0
    l_edges = [l_hi * i / 24 for i in range(25)]
    l_edges[-1] = l_hi * (1 + 1e-9)
    l_ymax = 1
    for s in solved:
        if s.loads is not None:
            for ld in s.loads:
                flat = ld.reshape(-1)
                l_ymax = max(l_ymax, max(_counts(flat[flat > 0], l_edges)))
    views = []
    for it in items:
        if isinstance(it, tuple):
            views.append(StrategyView(it[0], it[1], "", (), (), None, None, None, ()))
            continue
        a = it.analysis
        fw, fr = a.fabric.writes, a.fabric.reads
        headline = (
            f"{_pct(fw.fraction)} of {_f(fw.served, 1)} write flows and {_pct(fr.fraction)} of "
            f"{_f(fr.served, 1)} read flows cross a spine; "
            f"{a.fabric.crossing_routes} of {a.fabric.routes} router-server pairs in use cross"
        )
        if fw.max_uplink > 0:
            headline += (
                f"; busiest uplink {_f(fw.max_uplink)} write flows ({fw.max_leaf}), "
                f"max/mean {_f(fw.imbalance)}"
            )
        if a.lost_writes or a.lost_reads:
            headline += (
                f"; unserved: {_f(a.lost_writes, 1)} write and {_f(a.lost_reads, 1)} read flows"
            )
        views.append(
            StrategyView(
                it.name,
                "",
                headline,
                _fabric_views(site, it, max_switches, riser_max),
                _torus_phases(site, it, heat_max, max_slices, not compare),
                _router_hist(it, r_edges, r_ymax, compare),
                _link_hist(it, l_edges, l_ymax, sat, compare) if it.loads is not None else None,
                _failure_view(it, 5 if compare else 8),
                tuple((f.code, f.message, f.count) for f in a.findings),
            )
        )
    facts: list[tuple[str, str]] = [
        ("clients", f"{len(site.clients):,}"),
        ("LNet routers", f"{len(site.routers):,}"),
        (
            "servers",
            f"{len(site.servers):,} ({sum(1 for s in site.servers if s.role == 'oss')} OSS, "
            f"{sum(len(s.osts) for s in site.servers):,} OSTs)",
        ),
        (
            "storage fabrics",
            ", ".join(
                f"{f.name} ({len(f.switches)} switches)"
                for f in site.fabrics
                if f.role == "storage"
            ),
        ),
    ]
    if site.torus is not None:
        t = site.torus
        facts.append(
            (
                "torus",
                f"{t.dims[0]}x{t.dims[1]}x{t.dims[2]}, {t.routing} routing, "
                f"{t.nodes_per_chip} node(s) per chip",
            )
        )
    compute = [f for f in site.fabrics if f.role != "storage"]
    compute_note = (
        f"Compute fabric {', '.join(f.name for f in compute)} (the client side) is not drawn."
        if compute
        else ""
    )
    model = (
        f"Uniform workload: every client reads and writes an equal share of every OST's "
        f"stream; one flow = one OST at {settings.ost_mb_s:g} MB/s (counted by "
        f"{settings.weight_by}); a torus link saturates above {_f(sat)} flows "
        f"({settings.link_mb_s:g} / {settings.ost_mb_s:g} MB/s)."
    )
    return Report(
        title=f"lnetgen report: {site.name}"
        + (f" ({strategies[0]})" if not compare else " (strategies compared)"),
        site=site.name,
        description=site.description,
        version=__version__,
        digest=site.digest[:16],
        mode="compare" if compare else "single",
        facts=tuple(facts),
        model=model,
        summary=_summary(site, items),
        failure_chart=_failure_chart(solved),
        views=tuple(views),
        heat_legend=_heat_legend(heat_max, sat)
        if any(s.loads is not None for s in solved)
        else None,
        fabric_legend=_fabric_legend(),
        warnings=_warnings(warnings),
        compute_note=compute_note,
    )


def _leaf_uplinks(site: Site, label: str) -> int:
    sw_name, _, leaf_name = label.partition("/")
    sw = site.switch(sw_name)
    leaf = sw.leaf(leaf_name) if sw is not None else None
    return max(int(leaf.uplinks), 1) if leaf is not None and leaf.uplinks else 1


# ============================================================================ HTML


def num(v: float) -> str:
    """A coordinate as short text: ``12``, ``12.5``."""
    r = round(float(v), 1)
    return str(int(r)) if r == int(r) else f"{r:.1f}"


@cache
def environment() -> jinja2.Environment:
    """The report's Jinja2 environment: the shipped templates directory, autoescape on."""
    env = make_environment(autoescape=True)
    env.filters["num"] = num
    return env


def render_svg(svg: Svg) -> str:
    """One picture as an ``<svg>`` element (what the report inlines)."""
    return environment().get_template("report/svg.html.j2").module.svg(svg)  # type: ignore[attr-defined,no-any-return]


def render_html(report: Report) -> str:
    """The whole report as one self-contained HTML document."""
    return environment().get_template("report/report.html.j2").render(r=report)


def html_report(
    site: Site,
    strategies: Sequence[str],
    warnings: Sequence[Diagnostic] = (),
    **options: Any,
) -> str:
    """:func:`build_report` then :func:`render_html`."""
    return render_html(build_report(site, strategies, warnings, **options))


__all__ = [
    "COMPARE_MAX_SLICES",
    "COMPARE_MAX_SWITCHES",
    "MAX_SLICES",
    "MAX_SWITCHES",
    "Circle",
    "FabricView",
    "FailureView",
    "Figure",
    "Line",
    "Message",
    "Poly",
    "Rect",
    "Report",
    "StrategyView",
    "Svg",
    "Table",
    "Text",
    "TorusPhase",
    "build_report",
    "clients_per_router",
    "environment",
    "html_report",
    "link_load_arrays",
    "num",
    "render_html",
    "render_svg",
]
