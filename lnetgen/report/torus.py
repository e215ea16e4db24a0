"""The torus pictures: per-link load as heat maps of X-Y slices, writes and reads, with the
router chips ringed, and the colour scale they share.

Each cell is the busiest of the six links leaving a chip.  Per direction a max-over-Z overview
comes first, then at most ``max_slices`` z-slices, the most loaded ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from lnetgen import topology
from lnetgen.model import Site
from lnetgen.report.data import Figure, TorusPhase
from lnetgen.report.solved import FloatArray, Solved
from lnetgen.report.svg import (
    PAGE_WIDTH,
    Circle,
    Line,
    Rect,
    Shape,
    Svg,
    Text,
    coord,
    fmt,
    some,
    tick_text,
    ticks,
)

#: Heat colour classes ``h1``..``h9`` (``h0`` = no load).
HEAT_BINS = 9


def heat_scale(solved: Sequence[Solved]) -> float:
    """The top of the heat colour scale, shared by every strategy: flows on the busiest
    directed link, writes or reads."""
    return max(
        [float(max(s.loads[0].max(), s.loads[1].max())) for s in solved if s.loads is not None]
        + [0.0]
    )


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
                title = f"x={x} y={y}: {fmt(v)} flows, busiest link {link}"
            else:
                title = f"({x},{y},{z}) {topology.DIRECTIONS[k]} {fmt(v)} flows"
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
                coord(left + (x + 0.5) * cell),
                coord(top + (y + 0.5) * cell),
                coord(r),
                "rtr",
                f"{some(names, 4)} at x={x} y={y}" + ("" if z is None else f" z={z}"),
            )
        )
    w, h = left + nx * cell, top + ny * cell
    items.append(Text(left, h + 12, "0", "axis"))
    items.append(Text(w, h + 12, f"x={nx - 1}", "axis", "end"))
    items.append(Text(left - 3, top + 9, "0", "axis", "end"))
    items.append(Text(left - 3, h, f"{ny - 1}", "axis", "end"))
    items.append(Text(coord(left + nx * cell / 2), h + 12, "x →", "axis", "middle"))
    return Svg(w + 2, h + 16, label, tuple(items))


def torus_phases(
    site: Site, s: Solved, vmax: float, max_slices: int, big: bool
) -> tuple[TorusPhase, ...]:
    """Writes then reads of one strategy: a headline and the heat maps, on the shared colour
    scale ``vmax``; ``big`` lays the maps out for a single strategy.  Empty without a torus."""
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
                    f"max {fmt(float(zmax[z]))}",
                )
            )
        flat_l = loads[topology.real_links(dims)]  # no slot along a dimension of size 1
        used = int((flat_l > 0).sum())
        skipped = dims[2] - len(picked)
        # without a link or an OST rate no saturation to count links above (analyze: n/a)
        past = (
            f"{int((flat_l > sat + 1e-9).sum())} link(s) above saturation ({fmt(sat)})"
            if math.isfinite(sat)
            else "saturation n/a"
        )
        headline = (
            f"{name} ({what}): busiest link {fmt(float(flat_l.max(initial=0.0)))} flows, "
            f"p99 {fmt(float(np.percentile(flat_l, 99)) if len(flat_l) else 0.0)}, "
            f"{past}; {used} of {len(flat_l)} links carry traffic"
        )
        if skipped:
            headline += (
                f"; showing the {len(picked)} most loaded of {dims[2]} z-slices "
                f"({', '.join(str(z) for z in picked)})"
            )
        out.append(TorusPhase(name, headline, tuple(maps)))
    return tuple(out)


def heat_legend(vmax: float, saturation: float) -> Svg:
    """The colour scale of the torus maps, ticked in flows per link."""
    items: list[Shape] = [Rect(4, 4, 22, 14, "h0"), Text(30, 15, "no flows", "legend")]
    x0, bw = 100.0, 34.0
    for b in range(1, HEAT_BINS + 1):
        lo, hi = vmax * (b - 1) / HEAT_BINS, vmax * b / HEAT_BINS
        items.append(
            Rect(x0 + (b - 1) * bw, 4, bw, 14, f"h{b}", f"{fmt(lo)} to {fmt(hi)} flows per link")
        )
    marks = ticks(vmax, 5)
    if vmax - marks[-1] > 0.25 * (marks[1] - marks[0] if len(marks) > 1 else vmax):
        marks.append(round(vmax, 2))
    for t in marks:
        x = x0 + bw * HEAT_BINS * (t / vmax if vmax else 0)
        items.append(Line(coord(x), 18, coord(x), 22, "tick"))
        items.append(Text(coord(x), 32, tick_text(t), "axis", "middle"))
    x1 = x0 + bw * HEAT_BINS + 16
    items.append(Text(x1, 15, "flows on the busiest link leaving the chip", "legend"))
    items.append(Rect(x1 + 290, 4, 14, 14, "h9 sat"))
    sat = f"{fmt(saturation)} flows" if math.isfinite(saturation) else "n/a"
    items.append(Text(x1 + 310, 15, f"above saturation ({sat})", "legend"))
    items.append(Circle(x1 + 520, 11, 4.5, "rtr"))
    items.append(Text(x1 + 530, 15, "LNet router(s) on the chip", "legend"))
    return Svg(PAGE_WIDTH, 36, "colour scale of the torus maps", tuple(items))
