"""The single-router failure (N-1) pictures: one bar per strategy splitting its routers by what
their failure alone does, and per strategy a headline and the table of the worst routers.
"""

from __future__ import annotations

from collections.abc import Sequence

from lnetgen.analyze import NMinus1
from lnetgen.report.data import FailureView, Figure, Table
from lnetgen.report.solved import Solved
from lnetgen.report.svg import Rect, Shape, Svg, Text, coord

#: What a router's failure alone does, worst first, and its colour class.
_N1_CLASSES = (
    ("lose a net", "f-lost"),
    ("fall back", "f-back"),
    ("degrade", "f-deg"),
    ("harmless", "f-ok"),
)
_HARMLESS = len(_N1_CLASSES) - 1


def _n1_classes(nm: NMinus1) -> list[int]:
    """Per router (in ``nm.routers`` order) its index into ``_N1_CLASSES``."""
    out = []
    for f in nm.routers:
        if f.lost or f.server_lost:
            out.append(0)
        elif f.fallback or f.server_fallback:
            out.append(1)
        elif f.degraded:
            out.append(2)
        else:
            out.append(_HARMLESS)
    return out


def _n1_buckets(nm: NMinus1) -> list[int]:
    """How many routers fall into each of ``_N1_CLASSES``."""
    out = [0] * len(_N1_CLASSES)
    for c in _n1_classes(nm):
        out[c] += 1
    return out


def failure_chart(solved: Sequence[Solved]) -> Figure | None:
    """One stacked bar per strategy with an N-1 analysis; None when none has one."""
    rows = [(s.name, _n1_buckets(s.analysis.n_minus_1)) for s in solved if s.analysis.n_minus_1]
    if not rows:
        return None
    left, bar, gap, width = 130, 20, 8, 760
    pw = width - left - 20
    items: list[Shape] = []
    y = 26.0
    for name, buckets in rows:
        total = max(sum(buckets), 1)
        x = float(left)
        items.append(Text(left - 8, coord(y + 14), name, "legend", "end"))
        for (what, cls), c in zip(_N1_CLASSES, buckets, strict=True):
            if not c:
                continue
            w = pw * c / total
            items.append(
                Rect(coord(x), coord(y), coord(w), bar, cls, f"{name}: {c} router(s) {what}")
            )
            if w > 22:
                items.append(Text(coord(x + w / 2), coord(y + 14), str(c), "bar-v", "middle"))
            x += w
        y += bar + gap
    lx = float(left)
    for what, cls in _N1_CLASSES:
        harmless = what == "harmless"
        text = "changes nothing" if harmless else f"failure alone makes some pair {what}"
        items.append(Rect(coord(lx), 6, 10, 10, cls))
        items.append(Text(coord(lx + 14), 15, text, "legend"))
        lx += 14 + (110 if harmless else 7 * len(text)) + 16
    return Figure(
        "single-router failures (N-1)",
        Svg(width, coord(y + 4), "routers by what their failure alone does", tuple(items)),
        "each router failed on its own: does some (client class, storage net) or (server "
        "group, client net) pair lose every route, fall back to a worse priority, or keep its "
        "priority with fewer gateways?",
    )


def failure_view(s: Solved, rows: int) -> FailureView | None:
    """The headline of one strategy's N-1 analysis and its ``rows`` worst routers."""
    nm = s.analysis.n_minus_1
    if nm is None:
        return None
    classes = _n1_classes(nm)
    if nm.worst is None:
        headline = f"no single router failure changes any route ({len(nm.routers)} routers)"
    else:
        w = nm.worst
        headline = (
            f"worst single router {w.router}: {w.lost} clients x nets lost, {w.fallback} fall "
            f"back, {w.degraded} degraded; servers: {w.server_lost} lost, {w.server_fallback} "
            f"fall back.  {classes.count(0)} of {len(nm.routers)} routers leave some pair "
            f"without a route, {classes.count(1)} more force a fallback."
        )
    hurt = [f for f, c in zip(nm.routers, classes, strict=True) if c != _HARMLESS]
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
