"""The dragonfly client side: where each layout's client <-> router flows go -- on the
client's switch, over one local link of its group, or across a global link -- and the busiest
pair of groups, as one stacked bar per layout and direction and a table.

On a dragonfly that split is what separates the layouts (a layout that keeps writes in the
client's group spares the global links), so the report shows it wherever ``lnetgen analyze``
and ``lnetgen compare`` do.  The figures are the analysis's own
(:class:`lnetgen.traffic.dragonfly.DragonflyReport`, read from ``Analysis.dragonfly``), worded
and rounded as ``analyze`` prints them ("46.9 % in its group", "busiest group pair g0->g4: 2.0
flows"), so that a reader can match the page with the text.  Nothing is shown on a site whose
client side is not a dragonfly.

The picture is plain: every bar runs 0-100 % of that direction's flows, one segment per
share, in the same order and colours for every layout; a share the analysis does not place
(a flow whose router has no place on the dragonfly, which validation refuses) is left blank
rather than drawn as one of the three.
"""

from __future__ import annotations

from collections.abc import Sequence

from lnetgen.report.data import DragonflyView, Figure, Table
from lnetgen.report.solved import Solved, Unsolved
from lnetgen.report.svg import Line, Rect, Shape, Svg, Text, coord, pct
from lnetgen.traffic.dragonfly import DragonflyReport, GroupFlows

#: The three shares, in analyze's words and order, with their colour class.
SHARES = (
    ("on the client's switch", "d-sw"),
    ("in its group", "d-grp"),
    ("across a global link", "d-glob"),
)
#: The two directions, as analyze labels them.
DIRECTIONS = ("writes (client -> router)", "reads (router -> client)")


def headline(d: DragonflyReport) -> str:
    """The site's dragonfly in analyze's words (its first dragonfly line)."""
    return (
        f"dragonfly {d.groups} groups x {d.switches} switches, {d.global_links} global links per "
        "pair of groups (client <-> router flows, minimal routes)"
    )


def _shares(g: GroupFlows) -> tuple[float, float, float]:
    """The three shares of one direction's flows (as analyze divides them)."""
    return (g.same_switch / g.flows, g.same_group / g.flows, g.cross_group / g.flows)


def _flows(g: GroupFlows) -> tuple[float, float, float]:
    return (g.same_switch, g.same_group, g.cross_group)


def busiest(g: GroupFlows) -> str:
    """The busiest pair of groups as analyze prints it, "none" when no flow crosses."""
    return f"{g.busiest}: {g.busiest_flows:.1f} flows" if g.busiest else "none"


def _directions(d: DragonflyReport) -> tuple[tuple[str, GroupFlows], ...]:
    return tuple(zip(DIRECTIONS, (d.writes, d.reads), strict=True))


def _table(rows: Sequence[tuple[str, DragonflyReport | None]]) -> Table:
    body: list[tuple[str, ...]] = []
    for name, d in rows:
        if d is None:
            body.append((name, "not solvable", "", "", "", ""))
            continue
        for label, g in _directions(d):
            if not g.flows:
                body.append((name, label, "no flows", "", "", ""))
                continue
            body.append((name, label, *(pct(x) for x in _shares(g)), busiest(g)))
    return Table(
        ("strategy", "direction", *(what for what, _ in SHARES), "busiest group pair"),
        tuple(body),
        (False, False, True, True, True, False),
    )


def _figure(rows: Sequence[tuple[str, DragonflyReport]]) -> Figure:
    """One stacked bar per layout and direction, 0-100 % of that direction's flows."""
    left, pw, bar, gap, group_gap = 200, 560, 18, 4, 14
    width = left + pw + 20
    items: list[Shape] = []
    lx = float(left)
    for what, cls in SHARES:
        items.append(Rect(coord(lx), 6, 10, 10, cls))
        items.append(Text(coord(lx + 14), 15, what, "legend"))
        lx += 14 + 7 * len(what) + 18
    y = 28.0
    for i, (name, d) in enumerate(rows):
        if i:
            y += group_gap
        for label, g in _directions(d):
            short = label.split(" ", 1)[0]
            if short == "writes":
                items.append(Text(left - 58, coord(y + 13), name, "legend", "end"))
            items.append(Text(left - 8, coord(y + 13), short, "legend", "end"))
            items.append(Rect(left, coord(y), pw, bar, "plot"))
            if not g.flows:
                items.append(Text(left + 6, coord(y + 13), "no flows", "axis"))
            else:
                x = float(left)
                for (what, cls), share, flows in zip(SHARES, _shares(g), _flows(g), strict=True):
                    w = pw * share
                    if w <= 0:
                        continue
                    title = (
                        f"{name} {label}: {pct(share)} {what} ({flows:.1f} of {g.flows:.1f} flows)"
                    )
                    items.append(Rect(coord(x), coord(y), coord(w), bar, cls, title))
                    if w > 44:
                        items.append(
                            Text(coord(x + w / 2), coord(y + 13), pct(share), "bar-v", "middle")
                        )
                    x += w
            y += bar + gap
    y += 2
    for percent in (0, 25, 50, 75, 100):
        x = coord(left + pw * percent / 100)
        items.append(Line(x, coord(y), x, coord(y + 4), "tick"))
        items.append(Text(x, coord(y + 15), f"{percent} %", "axis", "middle"))
    return Figure(
        "dragonfly: where client <-> router flows go",
        Svg(width, coord(y + 20), "dragonfly flows by switch, group and global link", tuple(items)),
        "each bar is 100 % of that layout's write (client -> router) or read (router -> client) "
        "flows, on minimal routes: on the client's own switch, over one local link in its "
        "group, or across a global link to another group.",
    )


def dragonfly_view(items: Sequence[Solved | Unsolved]) -> DragonflyView | None:
    """The dragonfly section of the page: one bar per solved layout and direction, one table
    row per layout and direction (a layout that cannot be solved: one row saying so).  None
    when no solved layout has a dragonfly client side (the site is not a dragonfly, or nothing
    could be solved)."""
    rows: list[tuple[str, DragonflyReport]] = []
    table: list[tuple[str, DragonflyReport | None]] = []
    for it in items:
        if isinstance(it, Unsolved):
            table.append((it.name, None))
        elif it.analysis.dragonfly is not None:
            rows.append((it.name, it.analysis.dragonfly))
            table.append(rows[-1])
    if not rows:
        return None
    return DragonflyView(headline(rows[0][1]), _figure(rows), _table(table))


__all__ = ["DIRECTIONS", "SHARES", "busiest", "dragonfly_view", "headline"]
