"""``lnetgen analyze``: congestion, bandwidth and failures, printed from the data
``lnetgen.analyze`` returns (``lnetgen compare`` is in ``lnetgen.cli.compare``).

``COMMANDS`` also holds ``lnetgen place`` (from ``lnetgen.cli.place``, re-exported here).
Register with ``for cmd in COMMANDS: main.add_command(cmd)``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import click

from lnetgen.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    STRATEGY_OPT,
    force_option,
    handles_input_errors,
    model_options,
    opensm_option,
    opensm_routes,
    progress_bars,
    quiet_option,
    site_argument,
    workload_option,
    workload_spec,
)
from lnetgen.cli.nodesets import nodeset_option
from lnetgen.cli.place import format_placement, place_clients_cmd, place_group, place_osts_cmd
from lnetgen.cli.siteplan import format_option, load_plan, model_settings, num, plan_option

if TYPE_CHECKING:  # the library is imported lazily at run time
    from lnetgen.analyze import Analysis, FailureReport, LinkStats, Settings
    from lnetgen.model import Site
    from lnetgen.throughput import Prediction, WorkloadSpec
    from lnetgen.throughput.fabric import FabricRoutes
    from lnetgen.traffic.dragonfly import DragonflyReport


#: How routes simulated with ``--opensm recorded`` are labelled when the fabrics they route
#: record no OpenSM settings (``"cib, sib (none recorded, so OpenSM's default settings)"``).
NONE_RECORDED = "none recorded, so OpenSM's default"


def opensm_routes_said(
    site: Site, opensm: str | None, spec: WorkloadSpec | None
) -> tuple[FabricRoutes | None, FabricRoutes | None]:
    """``opensm_routes`` (compute, storage) as analyze, compare and report print them:
    ``--opensm recorded`` on a site none of whose routed fabrics records OpenSM settings
    simulates OpenSM without any, and says so (:data:`NONE_RECORDED`) rather than
    "(recorded settings)"; a site that records them for any routed fabric keeps "recorded"."""
    from dataclasses import replace

    routes = opensm_routes(site, opensm, spec)
    if opensm != "recorded" or all(r is None for r in routes):
        return routes
    names = {n.strip() for r in routes if r is not None for n in r.fabric.split(",")}
    if any(f.opensm is not None for f in site.fabrics if f.name in names):
        return routes
    compute, storage = (None if r is None else replace(r, settings=NONE_RECORDED) for r in routes)
    return compute, storage


def pct(x: float) -> str:
    """``"12.5 %"``."""
    return f"{100 * x:.1f} %"


# ============================================================================ analyze


@click.command("analyze")
@site_argument
@STRATEGY_OPT
@plan_option
@force_option("use a --plan solved from another version of SITE")
@format_option
@nodeset_option(
    "--fail",
    "fail",
    metavar="NAMES",
    help="fail routers (a node set: 'rtr[01-02]'), a leaf (core1/L01) or switch (every router "
    "and server cabled to it), servers (a server's targets move to a live failover partner, "
    "else are lost), or a storage net or group (its priority-0 routers); repeatable",
)
@click.option("--all", "show_all", is_flag=True, help="list every hurt pair and every router")
@model_options
@workload_option
@click.option(
    "--arbitration",
    type=click.Choice(["fair", "age"]),
    default="fair",
    show_default=True,
    help="torus links share fairly, or as SeaStar without packet age: a stream H hops away "
    "gets 2^-H of a near one's share (seed 000 s4)",
)
@opensm_option
@quiet_option
@handles_input_errors()
def analyze_cmd(
    site: str,
    strategy: str | None,
    plan_path: str | None,
    force: bool,
    fmt: str,
    fail: tuple[str, ...],
    show_all: bool,
    link_mb_s: float | None,
    ost_mb_s: float | None,
    weight_by: str,
    workload: str | None,
    arbitration: str,
    opensm: str | None,
    quiet: bool,
) -> None:
    """Predict congestion and check failures for the plan of SITE.

    Every client sends equally to every OST (one flow = one OST's stream).  Reports the share
    of storage traffic that crosses a spine, torus link loads under dimension-order routing
    (writes client->router, reads router->client) and how each router's six links are used,
    and either the N-1 summary (worst single-router failure) or, with --fail, every (client
    class, storage net) and (servers, client net) pair that loses its planned routes.
    Predicted GB/s is "at most" where the path crosses a component whose rate the site does
    not give; a rates legend names each rate's inventory source, or the option that gave it.

    Exit status: 0 ok; 1 findings (routes dead on paper, missing hop counts, an invalid
    inventory) or, with --fail, a pair left without any live route or a server's targets
    without a live server; 2 bad input or usage.
    """
    from lnetgen.analyze import LOST, analyze

    spec = workload_spec(workload)
    site_obj, plan = load_plan(site, strategy, plan_path, force)
    routes, storage = opensm_routes_said(site_obj, opensm, spec)
    result = analyze(
        site_obj,
        plan,
        fail=fail,
        settings=model_settings(site_obj, link_mb_s, ost_mb_s, weight_by),
        throughput=spec,
        arbitration=arbitration,
        fabric_routes=routes,
        storage_routes=storage,
        progress=progress_bars(quiet),
    )
    if fmt == "json":
        click.echo(json.dumps(result.as_dict(), indent=1, sort_keys=True))
    else:
        for line in format_analysis(result, show_all):
            click.echo(line)
    f = result.failure
    lost = f is not None and (any(p.status == LOST for p in f.pairs) or f.lost_servers > 0)
    sys.exit(EXIT_FINDINGS if (result.findings or lost) else EXIT_OK)


def _link_line(label: str, st: LinkStats, saturation: float) -> list[str]:
    past = (
        f"{st.saturated} link(s) above {num(saturation)}"
        if math.isfinite(saturation)
        else "saturation n/a"
    )
    lines = [
        f"  {label}: max {num(st.max)}  p99 {num(st.p99)}  mean {num(st.mean, 3)} flows per "
        f"link; {past}; {st.used} of {st.links} links used; volume {num(st.volume, 1)} flow-hops"
    ]
    if st.top:
        lines.append("    busiest: " + ", ".join(f"{n} {num(v)}" for n, v in st.top))
    return lines


def _dragonfly_lines(d: DragonflyReport) -> list[str]:
    out = [
        f"dragonfly {d.groups} groups x {d.switches} switches, {d.global_links} global links per "
        "pair of groups (client <-> router flows, minimal routes)"
    ]
    for label, g in (
        ("writes (client -> router)", d.writes),
        ("reads  (router -> client)", d.reads),
    ):
        if not g.flows:
            out.append(f"  {label}: no flows")
            continue
        line = (
            f"  {label}: {pct(g.same_switch / g.flows)} on the client's switch, "
            f"{pct(g.same_group / g.flows)} in its group, {pct(g.cross_group / g.flows)} across "
            "a global link"
        )
        if g.busiest:
            line += f"; busiest group pair {g.busiest}: {num(g.busiest_flows, 1)} flows"
        out.append(line)
    return out


def format_analysis(a: Analysis, show_all: bool = False) -> list[str]:
    """The text report of ``lnetgen analyze``."""
    from lnetgen.throughput.sources import merged
    from lnetgen.traffic.settings import given_mb_s

    s = a.settings
    out = [
        f"site {a.site}  strategy {a.strategy}  workload {a.workload}: {num(a.flows, 1)} flows "
        f"(one flow = one OST at {given_mb_s(s.ost_mb_s, s.ost_source)}, counted by {s.weight_by})"
    ]
    if a.lost_writes or a.lost_reads:
        out.append(
            f"  unserved: {num(a.lost_writes, 1)} write flows and {num(a.lost_reads, 1)} read "
            "flows have no live route"
            + (" or server (see the servers out of service below)" if _servers_down(a) else "")
        )
    fb = a.fabric
    out.append("")
    out.append("storage fabric (spine crossing: router and server on different leaf modules)")
    for label, ph in (("writes", fb.writes), ("reads ", fb.reads)):
        inter = ph.inter_switch / ph.served if ph.served else 0.0
        line = (
            f"  {label}: {pct(ph.fraction)} of {num(ph.served, 1)} flows cross the spine "
            f"({pct(inter)} between switches)"
        )
        if ph.max_uplink > 0:
            line += (
                f"; busiest uplink {num(ph.max_uplink)} flows ({ph.max_leaf}), mean "
                f"{num(ph.mean_uplink)}, max/mean {num(ph.imbalance)}"
            )
        out.append(line)
    out.append(
        f"  router-server routes used at the best priority: {fb.routes}, crossing the spine: "
        f"{fb.crossing_routes}"
    )
    out.extend(throughput_lines(a.throughput))
    out.extend(rates_lines(s, merged(p.sources for p in a.throughput)))
    t = a.torus
    out.append("")
    if a.dragonfly is not None:
        out.extend(_dragonfly_lines(a.dragonfly))
    elif t is None:
        out.append("torus: n/a (the client side is not a torus)")
    else:
        dims = "x".join(str(d) for d in t.dims)
        out.append(
            f"torus {dims}, {t.routing} routing; a link saturates above {num(t.saturation)} flows "
            f"({given_mb_s(s.link_mb_s, s.link_source)} / {given_mb_s(s.ost_mb_s, s.ost_source)})"
        )
        out.extend(_link_line("writes (client -> router)", t.writes, t.saturation))
        out.extend(_link_line("reads  (router -> client)", t.reads, t.saturation))
        ports = " ".join(f"{p:>4}" for p in ("X+", "X-", "Y+", "Y-", "Z+", "Z-"))
        width = max([len(r.name) for r in t.routers] + [6])
        pad = " " * (width + 30)
        out.append("")
        out.append(f"  {pad}writes in, by link{' ' * 19}reads out, by link")
        out.append(
            f"  {'router':<{width}}  {'coords':<12} {'clients':>7}  {'flows':>7} {ports}  "
            f"{'flows':>7} {ports}"
        )
        routers = t.routers if show_all or len(t.routers) <= 40 else t.routers[:40]
        for r in routers:
            c = "(" + ",".join(str(v) for v in r.coords) + ")"
            win = " ".join(f"{_share(v, r.writes):>4}" for v in r.writes_in)
            rout = " ".join(f"{_share(v, r.reads):>4}" for v in r.reads_out)
            out.append(
                f"  {r.name:<{width}}  {c:<12} {r.clients:>7}  {num(r.writes):>7} {win}  "
                f"{num(r.reads):>7} {rout}"
            )
        if len(routers) < len(t.routers):
            out.append(f"  ... {len(t.routers) - len(routers)} more routers (--all)")
        out.append(
            "  (clients: every client routed through the router, counted whole -- `solve` "
            "divides a client by its gateways; link columns: share of the router's own flows "
            "on the link to that neighbour)"
        )
    out.append("")
    out.extend(_failure_lines(a, show_all))
    out.append("")
    if a.findings:
        out.append(f"findings ({len(a.findings)}):")
        for f in a.findings:
            out.append(f"  [{f.code}] {f.message}" + (f" (x{f.count})" if f.count > 1 else ""))
    else:
        out.append("findings: none (every route is alive on paper and declares hop 1)")
    return out


def gb_s(x: float | None) -> str:
    """A bandwidth given in MB/s as analyze and compare print it, "n/a" when unknown: GB/s
    from 1 GB/s, MB/s below (never a nonzero figure as 0.0; ``lnetgen.analyze.units``)."""
    from lnetgen.analyze.units import rate

    return rate(x)


def rates_lines(
    settings: Settings | None, sources: Iterable[tuple[str, tuple[str, ...]]]
) -> list[str]:
    """The rates legend: every rate the figures use (the flow counts' ``settings``, the
    predictions' ``sources``: kind, entries), with the inventory entry (and its source) or the
    option it came from, and [what uses it]."""
    from lnetgen.throughput.sources import legend_lines

    lines = legend_lines(settings, sources)
    if not lines:
        return ["", "rates: none (neither the site's rates: nor an option gives one)"]
    out = [
        "",
        "rates (the inventory's rates: entry with its source, or the option; [what uses it]):",
    ]
    out.extend(f"  {line}" for line in lines)
    return out


def throughput_lines(preds: Sequence[Prediction]) -> list[str]:
    """The predicted-bandwidth section of analyze (one line per op, then what bounds it)."""
    if not preds:
        return []
    first = preds[0]
    out = [
        "",
        f"predicted bandwidth: {first.workload.replace(', write', '')}, {first.ranks} ranks on "
        f"{first.nodes} nodes; torus {first.torus}"
        + ("; SeaStar arbitration without packet age" if first.arbitration == "age" else "")
        + (f"; OpenSM routes of {first.opensm}" if first.opensm else "")
        + (
            f"; other jobs streaming on {first.background_nodes} nodes"
            if first.background_nodes
            else ""
        ),
    ]
    for p in preds:
        most = "at most " if p.bound else ""
        if p.unrouted:
            out.extend(_unrouted_lines(p, most))
        else:
            line = f"  {p.op + 's':<6}: {most}{gb_s(p.aggregate_mb_s)}"
            if p.bound:
                line += f" (bound: {p.why_bound})"
            line += " as IOR reports it"
            if p.aggregate_mb_s is not None:
                line += (
                    f" (all ranks running: {most}{gb_s(p.steady_mb_s)}; per rank {most}"
                    f"{_per_rank(p)})"
                )
            out.append(line)
        b = p.bottleneck
        if b is not None:
            out.append(
                f"          bottleneck {b.kind} {b.name}: {num(b.load_mb_s, 0)} of "
                f"{num(b.capacity_mb_s, 0)} MB/s ({pct(b.utilisation)}), holding "
                f"{b.ranks} rank(s)"
            )
    bounds = ", ".join(f"{k} {gb_s(v)}" for k, v in first.bound_mb_s.items())
    out.append(f"  capacity on the path: {bounds or 'n/a'}")
    if first.unknown:
        out.append(
            f"  rates the site does not give (n/a, not limiting): {', '.join(first.unknown)}"
        )
    return out


def _per_rank(p: Prediction) -> str:
    """``"714.3-750.0 MB/s"``: the slowest and the fastest rank (never a nonzero one as 0.0)."""
    from lnetgen.analyze.units import mb_s_digits

    return f"{mb_s_digits(p.rank_min_mb_s or 0)}-{mb_s_digits(p.rank_max_mb_s or 0)} MB/s"


def _unrouted_lines(p: Prediction, most: str) -> list[str]:
    """A prediction some of whose ranks have no route: IOR's figure is 0 (the hung ranks never
    finish), then what the ranks with a route move while they run."""
    out = [
        f"  {p.op + 's':<6}: 0 GB/s as IOR reports it: no route for {p.unrouted} of {p.ranks} "
        "ranks (their OSTs or their MDS are out of reach; the run never completes)"
    ]
    if p.steady_mb_s is not None:
        bound = f" (bound: {p.why_bound})" if p.bound else ""
        out.append(
            f"          the {p.ranks - p.unrouted} ranks with a route, running without the "
            f"others: {most}{gb_s(p.steady_mb_s)}{bound}; per rank {most}"
            f"{_per_rank(p)}"
        )
    return out


def _share(v: float, total: float) -> str:
    return f"{100 * v / total:.0f}%" if total > 0 else "-"


def _failure_lines(a: Analysis, show_all: bool) -> list[str]:
    out: list[str] = []
    if a.failure is not None:
        f = a.failure
        named = [s.name for s in f.servers if s.named]
        parts = [f"{len(f.failed)} router(s): {', '.join(f.failed) or 'none'}"]
        if named:  # a server named alone: no "0 router(s): none" in front of it
            parts = parts if f.failed else []
            parts.append(f"{len(named)} server(s): {', '.join(named)}")
        out.append("failure of " + "; ".join(parts))
        out += _server_lines(f, show_all)
        for side, what in (
            ("client", "clients x storage nets"),
            ("server", "servers x client nets"),
        ):
            c, w = f.counts[side], f.weighted[side]
            out.append(
                f"  {side} side: {c['lost']} pair(s) lost ({w['lost']} {what}), "
                f"{c['fallback']} fall back ({w['fallback']}), {c['degraded']} degraded "
                f"({w['degraded']})"
            )
        pairs = f.pairs if show_all else f.pairs[:30]
        for p in pairs:
            unit = "clients" if p.side == "client" else "servers"
            if p.status == "lost":
                detail = f"no live route (planned: priority {p.planned_priority}"
                detail += f", {p.planned_gateways} gateway(s))"
            elif p.status == "fallback":
                detail = (
                    f"priority {p.live_priority} ({p.live_gateways} gateway(s)) instead of "
                    f"{p.planned_priority}"
                )
            else:
                detail = (
                    f"{p.live_gateways} of {p.planned_gateways} gateway(s) left at priority "
                    f"{p.planned_priority}"
                )
            out.append(
                f"  {p.status:<8} {p.side} {p.who} ({p.members} {unit}) -> {p.net}: {detail}"
            )
        if len(pairs) < len(f.pairs):
            out.append(f"  ... {len(f.pairs) - len(pairs)} more pairs (--all)")
        out += _load_lines(a)
    elif a.n_minus_1 is not None:
        nm = a.n_minus_1
        if nm.worst is None:
            out.append("N-1: no single router failure changes any route")
        else:
            one = nm.worst
            out.append(
                f"N-1: worst single router {one.router}: {one.lost} clients x nets lost, "
                f"{one.fallback} fall back to a worse priority, {one.degraded} degraded; servers: "
                f"{one.server_lost} lost, {one.server_fallback} fall back"
            )
            out.append(
                f"  {nm.routers_losing_a_net} of {len(nm.routers)} routers leave some pair "
                "without a route when they fail alone"
            )
        out += _load_lines(a)
    return out


def _server_lines(f: FailureReport, show_all: bool) -> list[str]:
    """The servers a failure takes out of service: cut off with a failed leaf module or
    switch (every port cabled to it goes dark), or of a file system whose MDS is lost."""
    if not f.servers:
        return []
    named = sum(1 for s in f.servers if s.named)
    cut = sum(1 for s in f.servers if s.cut and not s.named)
    how = f"{named} failed by name, " if named else ""
    out = [
        f"  servers out of service: {len(f.servers)} ({how}{cut} cabled to the failed leaf "
        f"module or switch); targets lost on {f.lost_servers}, carried by a failover partner on "
        f"{len(f.servers) - f.lost_servers}"
    ]
    shown = f.servers if show_all else f.servers[:30]
    for s in shown:
        why = "failed" if s.named else "cut off" if s.cut else "its file system's MDS is lost"
        kind = "OSTs" if s.role == "oss" else "MDTs"
        fate = f"carried by {s.carried_by}" if s.carried_by else "lost"
        out.append(f"  {'lost' if not s.carried_by else 'moved':<8} server {s.name} ({s.role}, "
                   f"{s.targets} {kind}): {why}; targets {fate}")  # fmt: skip
    if len(shown) < len(f.servers):
        out.append(f"  ... {len(f.servers) - len(shown)} more servers (--all)")
    return out


def _servers_down(a: Analysis) -> bool:
    """Whether the failure took servers out of service."""
    return a.failure is not None and bool(a.failure.servers)


def _load_lines(a: Analysis) -> list[str]:
    """The busiest surviving router under the failure(s), in write flows (uniform workload)."""
    from lnetgen.analyze.units import flows

    out = []
    for w in a.failure_loads:
        down = "routers and servers" if a.failure is not None and a.failure.servers else "routers"
        what = (
            f"with the failed {down} down"
            if w.scope == "named"
            else (f"worst single {w.scope} failure ({w.failed})")
        )
        lost = f", {flows(w.lost)} flows without a route" if w.lost else ""
        if w.down:
            lost += f", {flows(w.down)} lost with their servers"
        if w.most_lost > w.lost + 1e-9:
            lost += f"; most without a route: {flows(w.most_lost)} ({w.most_lost_failed})"
        out.append(
            f"  {what}: busiest router {w.router} carries {w.flows:.2f} write flows, "
            f"{w.ratio:.2f}x the busiest with all up ({w.normal:.2f}){lost}"
        )
    return out


#: The commands this module adds to ``lnetgen``.
COMMANDS: tuple[click.Command, ...] = (analyze_cmd, place_group)

__all__ = [
    "COMMANDS",
    "analyze_cmd",
    "format_analysis",
    "format_placement",
    "gb_s",
    "opensm_routes_said",
    "pct",
    "place_clients_cmd",
    "place_group",
    "place_osts_cmd",
    "rates_lines",
]
