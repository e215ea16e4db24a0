"""The report page: solve each strategy, put every picture on scales the strategies share, and
assemble the :class:`Report` (site facts, summary table, one view per strategy, warnings).

Big sites are aggregated, not drawn point by point: clients appear only as torus link loads,
at most ``max_slices`` X-Y slices of the torus are drawn per direction (the most loaded ones,
after a max-over-Z overview), and at most ``max_switches`` switch boxes per strategy (the rest
are summarized in one line per fabric).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

from lnetgen import __version__
from lnetgen.analyze import Settings, input_error
from lnetgen.analyze.units import rate, same_unit
from lnetgen.diagnostics import Diagnostic
from lnetgen.model import Site
from lnetgen.progress import NO_PROGRESS, Progress
from lnetgen.report.data import Message, Report, StrategyView, Table
from lnetgen.report.dragonfly import dragonfly_view
from lnetgen.report.fabric import fabric_headline, fabric_legend, fabric_views, riser_scale
from lnetgen.report.failures import failure_chart, failure_view
from lnetgen.report.histograms import histogram_axes, link_hist, router_hist
from lnetgen.report.solved import IntArray, Solved, Unsolved, solve_all
from lnetgen.report.svg import fmt, pct
from lnetgen.report.torus import heat_legend, heat_scale, torus_phases
from lnetgen.throughput import DEFAULT, Prediction, WorkloadSpec
from lnetgen.throughput.fabric import FabricRoutes
from lnetgen.throughput.sources import legend_lines, merged
from lnetgen.traffic.dragonfly import DragonflyReport
from lnetgen.traffic.settings import given_mb_s, settings_for

#: Default caps: switch boxes drawn per strategy, torus slices drawn per direction.
MAX_SWITCHES = 24
MAX_SLICES = 6
#: The same caps per strategy in ``--compare`` mode (every strategy gets its own pictures).
COMPARE_MAX_SWITCHES = 8
COMPARE_MAX_SLICES = 2


def _span(v: IntArray) -> str:
    return f"{int(v.min())}-{int(v.max())}" if len(v) else "-"


def _summary(site: Site, items: Sequence[Solved | Unsolved]) -> Table:
    """One row per strategy: nets, classes, spine crossing, router and torus load (on a
    dragonfly: the write / read shares across a global link), N-1, predictions.  A strategy
    that cannot be solved is a row of empty cells as wide as the head (it was one short)."""
    rows: list[tuple[str, ...]] = []
    torus = site.torus is not None
    dragonfly = site.dragonfly is not None
    for it in items:
        if isinstance(it, Unsolved):
            rows.append((it.name, "not solvable"))  # padded to the head below
            continue
        a = it.analysis
        fw = a.fabric.writes
        nm = a.n_minus_1
        row = [
            it.name,
            str(len(it.ix.nets)),
            str(len(it.ix.classes)),
            pct(fw.fraction),
            fmt(fw.max_uplink, 1),
            _span(it.served),
        ]
        if torus and it.loads is not None:
            sat = a.settings.saturation
            row.append(f"{fmt(float(it.loads[0].max()))} / {fmt(float(it.loads[1].max()))}")
            row.append(
                str(int((it.loads[0] > sat + 1e-9).sum() + (it.loads[1] > sat + 1e-9).sum()))
                if math.isfinite(sat)
                else "n/a"
            )
        elif torus:
            row.extend(["-", "-"])
        if dragonfly:
            row.append(_global_share(a.dragonfly))
        row.append(
            f"{nm.worst.lost} / {nm.worst.fallback}" if nm is not None and nm.worst else "0 / 0"
        )
        row.append(str(nm.routers_losing_a_net if nm is not None else 0))
        row.append(str(len(a.findings)))
        row.extend(_predicted(a.throughput))
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
    if dragonfly:
        head.append("across a global link w / r")
    head += [
        "N-1 worst lost / back",
        "routers losing a net",
        "findings",
        "predicted write / read",
        "bottleneck (writes)",
    ]
    return Table(
        tuple(head),
        tuple(r + ("",) * (len(head) - len(r)) for r in rows),
        tuple(i > 0 for i in range(len(head))),
    )


def _global_share(d: DragonflyReport | None) -> str:
    """The share of write / read flows across a dragonfly global link, as analyze prints it
    ("-" for a direction without flows)."""
    if d is None:
        return "-"
    w, r = (pct(g.cross_group / g.flows) if g.flows else "-" for g in (d.writes, d.reads))
    return f"{w} / {r}"


def _predicted(preds: Sequence[Prediction]) -> list[str]:
    """The predicted bandwidth of writes / reads and the writes' bottleneck
    (lnetgen.throughput); "at most ..." when either figure is an upper bound (a rate on its
    path unknown).  ``"48.3 / 50.1 GB/s"``, or each figure with its unit when one is below
    1 GB/s (``"30 MB/s / 30 MB/s"``; ``lnetgen.analyze.units``): never a nonzero figure as 0.0."""
    by = {p.op: p for p in preds}

    def gb(op: str) -> str:
        p = by.get(op)
        if p is not None and p.unrouted:
            return f"0 (no route: {p.unrouted} ranks)"
        return rate(None if p is None else p.aggregate_mb_s)

    w = by.get("write")
    b = w.bottleneck if w is not None else None
    neck = f"{b.kind} {b.name} ({pct(b.utilisation)})" if b is not None else "n/a"
    most = "at most " if any(p.bound and not p.unrouted for p in preds) else ""
    return [most + same_unit([gb("write"), gb("read")]), neck]


def _warnings(diags: Sequence[Diagnostic]) -> tuple[Message, ...]:
    out = []
    for d in sorted(diags):
        where = os.path.basename(d.file) if d.file else "<input>"
        if d.line:
            where += f":{d.line}:{d.col or 1}"
        text = d.message + (f" (hint: {d.hint})" if d.hint else "")
        out.append(Message(d.severity, d.code, f"{where} {d.path}", text))
    return tuple(out)


def _facts(site: Site) -> tuple[tuple[str, str], ...]:
    """(label, value) about the site for the page header."""
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
    if site.dragonfly is not None:
        d = site.dragonfly
        facts.append(
            (
                "dragonfly",
                f"{d.groups} groups x {d.switches} switches, {d.global_links} global links per "
                "pair of groups",
            )
        )
    if site.torus is not None:
        t = site.torus
        facts.append(
            (
                "torus",
                f"{t.dims[0]}x{t.dims[1]}x{t.dims[2]}, {t.routing} routing, "
                f"{t.nodes_per_chip} node(s) per chip",
            )
        )
    return tuple(facts)


def _model(
    settings: Settings, routes: tuple[FabricRoutes | None, ...] = (), torus: bool = True
) -> str:
    """The traffic model in one sentence (two when OpenSM's routes feed the predictions).
    The torus saturation clause only on a site whose clients sit on a ``torus``: elsewhere
    there is no torus link to saturate, and "n/a flows (n/a / ...)" said nothing."""
    routed = [r for r in routes if r is not None]
    ost = given_mb_s(settings.ost_mb_s, settings.ost_source)
    saturates = (
        f"; a torus link saturates above {fmt(settings.saturation)} flows "
        f"({given_mb_s(settings.link_mb_s, settings.link_source)} / {ost})"
        if torus
        else ""
    )
    return (
        f"Uniform workload: every client reads and writes an equal share of every OST's "
        f"stream; one flow = one OST at {ost} (counted by {settings.weight_by}){saturates}."
    ) + (
        f" Predicted bandwidth follows OpenSM's simulated routes of "
        f"{', '.join(r.fabric for r in routed)} ({routed[0].settings} settings)."
        if routed
        else ""
    )


def _rates(settings: Settings, items: Sequence[Solved | Unsolved]) -> tuple[str, tuple[str, ...]]:
    """The legend of the predicted figures (what they are; which are upper bounds, and why)
    and the rates legend: each rate the page uses, with its inventory entry (and source) or
    option, and [what uses it]."""
    preds = [p for it in items if isinstance(it, Solved) for p in it.analysis.throughput]
    rates = tuple(legend_lines(settings, merged(p.sources for p in preds)))
    note = ""
    if preds:
        note = (
            "predicted write / read: the workload's bandwidth as IOR reports it (n/a where no "
            "rate bounds it); bottleneck: the resource that holds back the slowest writers."
        )
        if any(p.unrouted for p in preds):
            note += (
                " no route: N ranks: ranks that cannot reach the OSTs of their file hang, the "
                "run never completes, and IOR reports nothing (0)."
            )
        gaps = dict.fromkeys(k for p in preds if p.bound for k in p.unknown)
        why = (
            [f"the path crosses {', '.join(gaps)}, whose rates the site does not give (n/a, "
             "not limiting)"] if gaps else []
        )  # fmt: skip
        unmodelled = sorted({u for p in preds for u in p.unmodelled})
        if unmodelled:
            why.append(f"not modelled: {'; '.join(unmodelled)}")
        if any(p.unbounded for p in preds):
            why.append("some ranks cross no resource of known rate (analyze names them)")
        if why:
            note += (
                f" at most: an upper bound, not a prediction: {'; '.join(why)}; one bound "
                "above another does not rank the strategies."
            )
    return note, rates


def build_report(
    site: Site,
    strategies: Sequence[str],
    warnings: Sequence[Diagnostic] = (),
    *,
    settings: Settings | None = None,
    max_switches: int | None = None,
    max_slices: int | None = None,
    progress: Progress = NO_PROGRESS,
    workload: WorkloadSpec | None = DEFAULT,
    routes: tuple[FabricRoutes | None, FabricRoutes | None] = (None, None),
) -> Report:
    """Solve ``site`` with each of ``strategies`` (one: a single-strategy report; more: the
    strategies side by side), analyze each plan, and lay out every picture.  ``warnings`` are
    the inventory's validation warnings, listed at the end.  A strategy that cannot be solved
    gets a row saying why.  ``routes``: OpenSM's compute and storage fabric routes for the
    predictions (``lnetgen.throughput.fabric``).  Raises ``InputError`` when a plan does not
    match the site."""
    if not strategies:
        raise input_error("E-USAGE", "no strategy to report on")
    settings = settings or settings_for(site)
    compare = len(strategies) > 1
    max_switches = (
        max_switches
        if max_switches is not None
        else (COMPARE_MAX_SWITCHES if compare else MAX_SWITCHES)
    )
    max_slices = (
        max_slices if max_slices is not None else (COMPARE_MAX_SLICES if compare else MAX_SLICES)
    )
    items = solve_all(site, strategies, settings, progress, workload, routes)
    solved = [it for it in items if isinstance(it, Solved)]
    sat = settings.saturation
    # shared scales, so that strategies compare at a glance
    heat_max = heat_scale(solved)
    riser_max = riser_scale(solved)
    axes = histogram_axes(solved, heat_max)
    views = []
    for it in items:
        if isinstance(it, Unsolved):
            views.append(StrategyView(it.name, it.error, "", (), (), None, None, None, ()))
            continue
        views.append(
            StrategyView(
                it.name,
                "",
                fabric_headline(it.analysis),
                fabric_views(site, it, max_switches, riser_max),
                torus_phases(site, it, heat_max, max_slices, not compare),
                router_hist(it, axes, compare),
                link_hist(it, axes, sat, compare),
                failure_view(it, 5 if compare else 8),
                tuple((f.code, f.message, f.count) for f in it.analysis.findings),
            )
        )
    compute = [f for f in site.fabrics if f.role != "storage"]
    compute_note = (
        f"Compute fabric {', '.join(f.name for f in compute)} (the client side) is not drawn."
        if compute
        else ""
    )
    predicted_note, rates = _rates(settings, items)
    return Report(
        title=f"lnetgen report: {site.name}"
        + (f" ({strategies[0]})" if not compare else " (strategies compared)"),
        site=site.name,
        description=site.description,
        version=__version__,
        digest=site.digest[:16],
        mode="compare" if compare else "single",
        facts=_facts(site),
        model=_model(settings, routes, site.torus is not None),
        summary=_summary(site, items),
        failure_chart=failure_chart(solved),
        views=tuple(views),
        heat_legend=heat_legend(heat_max, sat)
        if any(s.loads is not None for s in solved)
        else None,
        fabric_legend=fabric_legend(),
        warnings=_warnings(warnings),
        compute_note=compute_note,
        predicted_note=predicted_note,
        rates=rates,
        dragonfly=dragonfly_view(items),
    )
