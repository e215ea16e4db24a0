"""The load histograms: clients per router, and torus links per load (writes and reads side by
side, log count axis), on axes every strategy shares so that they compare at a glance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lnetgen.report.data import Figure
from lnetgen.report.solved import Solved
from lnetgen.report.svg import Line, Rect, Shape, Svg, Text, coord, counts, fmt, tick_text, ticks
from lnetgen.topology import real_links


@dataclass(frozen=True)
class HistogramAxes:
    """The bins and the top of the count axis of each histogram, shared by every strategy."""

    router_edges: list[float]
    router_ymax: int
    link_edges: list[float]
    link_ymax: int


def _router_edges(vmax: int) -> list[float]:
    if vmax <= 0:
        return [0.0, 1.0]
    step = max(1, math.ceil((vmax + 1) / 24))
    nb = math.ceil((vmax + 1) / step)
    return [float(i * step) for i in range(nb + 1)]


def histogram_axes(solved: Sequence[Solved], heat_max: float) -> HistogramAxes:
    """Axes that fit every strategy: clients per router up to the busiest router, link loads
    in 24 bins up to ``heat_max`` (the busiest link)."""
    r_edges = _router_edges(max([int(s.served.max(initial=0)) for s in solved] + [0]))
    r_ymax = max([max(counts(s.served, r_edges)) for s in solved] + [1])
    l_hi = heat_max if heat_max > 0 else 1.0
    l_edges = [l_hi * i / 24 for i in range(25)]
    l_edges[-1] = l_hi * (1 + 1e-9)
    l_ymax = 1
    for s in solved:
        if s.loads is not None:
            for ld in s.loads:
                flat = ld.reshape(-1)
                l_ymax = max(l_ymax, max(counts(flat[flat > 0], l_edges)))
    return HistogramAxes(r_edges, r_ymax, l_edges, l_ymax)


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
    yt = [10**k for k in range(int(math.log10(max(ymax, 1))) + 1)] if log else ticks(ymax, 4)
    for t in yt:
        y = coord(sy(t))
        items.append(Line(left, y, left + pw, y, "grid"))
        items.append(Text(left - 4, coord(y + 3.5), tick_text(t), "axis", "end"))
    nser = max(len(series), 1)
    for i in range(len(edges) - 1):
        x0, x1 = sx(edges[i]), sx(edges[i + 1])
        bw = (x1 - x0 - 1) / nser
        for j, (sname, cls, bins) in enumerate(series):
            c = bins[i]
            if c <= 0:
                continue
            y = sy(c)
            items.append(
                Rect(
                    coord(x0 + 0.5 + j * bw),
                    coord(y),
                    coord(max(bw, 0.8)),
                    coord(top + ph - y),
                    cls,
                    f"{sname}: {c} in [{tick_text(round(edges[i], 4))}, "
                    f"{tick_text(round(edges[i + 1], 4))})",
                )
            )
    for t in ticks(hi - lo, 5):
        x = coord(sx(lo + t))
        items.append(Line(x, top + ph, x, top + ph + 4, "tick"))
        items.append(Text(x, top + ph + 15, tick_text(lo + t), "axis", "middle"))
    items.append(Text(coord(left + pw / 2), height - 4, xlabel, "axis", "middle"))
    if vline is not None and lo <= vline[0] <= hi:
        x = coord(sx(vline[0]))
        items.append(Line(x, top - 4, x, top + ph, "vline"))
        items.append(Text(x, top - 7, vline[1], "axis", "middle"))
    lx = float(left)
    for sname, cls, _bins in series:
        items.append(Rect(coord(lx), 4, 10, 10, cls))
        items.append(Text(coord(lx + 14), 13, sname, "legend"))
        lx += 14 + 7 * len(sname) + 14
    return Svg(width, height, label, tuple(items))


def router_hist(s: Solved, axes: HistogramAxes, narrow: bool) -> Figure:
    """Routers by the clients they serve; ``narrow`` for strategies side by side."""
    v = s.served
    idle = int((v == 0).sum())
    mean = float(v.mean()) if len(v) else 0.0
    caption = (
        f"{len(v)} routers: min {int(v.min()) if len(v) else 0}, mean {fmt(mean, 1)}, "
        f"max {int(v.max(initial=0))} clients" + (f"; {idle} serve no client" if idle else "")
    )
    svg = _bar_chart(
        f"{s.name}: clients per router",
        axes.router_edges,
        [("routers", "bar-r", counts(v, axes.router_edges))],
        axes.router_ymax,
        False,
        "clients served at priority 0",
        width=400 if narrow else 560,
    )
    return Figure(s.name if narrow else "clients per router", svg, caption)


def link_hist(s: Solved, axes: HistogramAxes, sat: float, narrow: bool) -> Figure | None:
    """Directed torus links by the flows they carry, the saturation ``sat`` marked; None
    without a torus."""
    if s.loads is None:
        return None
    edges = axes.link_edges
    real = real_links(s.loads[0].shape[:3])  # no slot along a dimension of size 1
    w = s.loads[0][real]
    r = s.loads[1][real]
    caption = (
        f"{len(w)} directed links; idle: {int((w == 0).sum())} for writes, "
        f"{int((r == 0).sum())} for reads (not counted); log scale"
    )
    if not math.isfinite(sat):
        caption += "; saturation n/a (no link or OST rate)"
    elif sat > edges[-1]:
        caption += f"; saturation ({fmt(sat)} flows) is beyond the axis"
    svg = _bar_chart(
        f"{s.name}: links per load",
        edges,
        [
            ("writes", "bar-w", counts(w[w > 0], edges)),
            ("reads", "bar-rd", counts(r[r > 0], edges)),
        ],
        axes.link_ymax,
        True,
        "flows on a directed torus link",
        (sat, f"saturation {fmt(sat)}"),
        width=400 if narrow else 560,
    )
    return Figure(s.name if narrow else "torus links per load", svg, caption)
