"""``lnetgen analyze``, ``lnetgen compare`` and ``lnetgen place``: congestion, failures and
placement, printed from the data ``lnetgen.analyze`` and ``lnetgen.place`` return.

Register with ``for cmd in COMMANDS: main.add_command(cmd)``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from lnetgen.cli.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    STRATEGY_OPT,
    handles_input_errors,
    model_options,
    print_diags,
)

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:  # the library is imported lazily at run time
    from lnetgen.analyze import Analysis, CompareRow, LinkStats, Settings
    from lnetgen.model import Site
    from lnetgen.place import ClientPlacement, PlacementComparison
    from lnetgen.plan import Plan


def _format_option(fn: F) -> F:
    return click.option(
        "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
    )(fn)


def _plan_option(fn: F) -> F:
    return click.option(
        "--plan",
        "plan_path",
        type=click.Path(exists=True, dir_okay=False),
        default=None,
        help="analyze this plan.json (from `lnetgen solve --out`) instead of solving SITE",
    )(fn)


def _settings(link_mb_s: float, ost_mb_s: float, weight_by: str) -> Settings:
    from lnetgen.analyze import Settings

    return Settings(link_mb_s, ost_mb_s, weight_by)


def _load(site_path: str, strategy: str | None, plan_path: str | None) -> tuple[Site, Plan]:
    """The site and its plan: solved, or read from ``plan_path`` (checked against the site)."""
    from lnetgen.api import load_site
    from lnetgen.diagnostics import Diagnostic, InputError
    from lnetgen.plan import Plan
    from lnetgen.solve import solve

    if plan_path and strategy:
        raise click.UsageError("give --strategy or --plan, not both")
    site, warnings = load_site(site_path)
    print_diags(warnings)
    if not plan_path:
        return site, solve(site, strategy)
    try:
        with open(plan_path, encoding="utf-8") as fh:
            plan = Plan.from_json(fh.read())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            [Diagnostic(plan_path, 0, 0, "error", "E-PLAN", "$", f"not a plan.json: {exc}")]
        ) from None
    if plan.inventory_digest != site.digest:
        print_diags(
            [
                Diagnostic(
                    plan_path,
                    0,
                    0,
                    "warning",
                    "W-PLAN-DIGEST",
                    "$.inventory_digest",
                    f"the plan was solved from another version of {site_path}",
                )
            ]
        )
    return site, plan


def _num(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


# ============================================================================ analyze


@click.command("analyze")
@click.argument("site", type=click.Path(exists=True, dir_okay=False))
@STRATEGY_OPT
@_plan_option
@_format_option
@click.option(
    "--fail",
    "fail",
    multiple=True,
    metavar="NAME",
    help="fail a router, a leaf (core1/L01) or switch (all its routers), or a storage net or "
    "group (its priority-0 routers); repeatable",
)
@click.option("--all", "show_all", is_flag=True, help="list every hurt pair and every router")
@model_options
@handles_input_errors(EXIT_INPUT)
def analyze_cmd(
    site: str,
    strategy: str | None,
    plan_path: str | None,
    fmt: str,
    fail: tuple[str, ...],
    show_all: bool,
    link_mb_s: float,
    ost_mb_s: float,
    weight_by: str,
) -> None:
    """Predict congestion and check failures for the plan of SITE.

    Every client sends equally to every OST (one flow = one OST's stream).  Reports the share
    of storage traffic that crosses a spine, torus link loads under dimension-order routing
    (writes client->router, reads router->client) and how each router's six links are used,
    and either the N-1 summary (worst single-router failure) or, with --fail, every (client
    class, storage net) and (servers, client net) pair that loses its planned routes.

    Exit status: 0 ok; 1 findings (routes dead on paper, missing hop counts) or, with --fail,
    a pair left without any live route; 2 bad input or usage.
    """
    from lnetgen.analyze import LOST, analyze

    site_obj, plan = _load(site, strategy, plan_path)
    result = analyze(site_obj, plan, fail=fail, settings=_settings(link_mb_s, ost_mb_s, weight_by))
    if fmt == "json":
        click.echo(json.dumps(result.as_dict(), indent=1, sort_keys=True))
    else:
        for line in format_analysis(result, show_all):
            click.echo(line)
    lost = result.failure is not None and any(p.status == LOST for p in result.failure.pairs)
    sys.exit(EXIT_FINDINGS if (result.findings or lost) else EXIT_OK)


def _link_line(label: str, st: LinkStats, saturation: float) -> list[str]:
    lines = [
        f"  {label}: max {_num(st.max)}  p99 {_num(st.p99)}  mean {_num(st.mean, 3)} flows per "
        f"link; {st.saturated} link(s) above {_num(saturation)}; {st.used} of {st.links} links "
        f"used; volume {_num(st.volume, 1)} flow-hops"
    ]
    if st.top:
        lines.append("    busiest: " + ", ".join(f"{n} {_num(v)}" for n, v in st.top))
    return lines


def format_analysis(a: Analysis, show_all: bool = False) -> list[str]:
    """The text report of ``lnetgen analyze``."""
    s = a.settings
    out = [
        f"site {a.site}  strategy {a.strategy}  workload {a.workload}: {_num(a.flows, 1)} flows "
        f"(one flow = one OST at {s.ost_mb_s:g} MB/s, counted by {s.weight_by})"
    ]
    if a.lost_writes or a.lost_reads:
        out.append(
            f"  unserved: {_num(a.lost_writes, 1)} write flows and {_num(a.lost_reads, 1)} read "
            "flows have no live route"
        )
    fb = a.fabric
    out.append("")
    out.append("storage fabric (spine crossing: router and server on different leaf modules)")
    for label, ph in (("writes", fb.writes), ("reads ", fb.reads)):
        inter = ph.inter_switch / ph.served if ph.served else 0.0
        line = (
            f"  {label}: {_pct(ph.fraction)} of {_num(ph.served, 1)} flows cross the spine "
            f"({_pct(inter)} between switches)"
        )
        if ph.max_uplink > 0:
            line += (
                f"; busiest uplink {_num(ph.max_uplink)} flows ({ph.max_leaf}), mean "
                f"{_num(ph.mean_uplink)}, max/mean {_num(ph.imbalance)}"
            )
        out.append(line)
    out.append(
        f"  router-server routes used at the best priority: {fb.routes}, crossing the spine: "
        f"{fb.crossing_routes}"
    )
    t = a.torus
    out.append("")
    if t is None:
        out.append("torus: none (the client side is not a torus); link loads not computed")
    else:
        dims = "x".join(str(d) for d in t.dims)
        out.append(
            f"torus {dims}, {t.routing} routing; a link saturates above {_num(t.saturation)} flows "
            f"({s.link_mb_s:g} / {s.ost_mb_s:g} MB/s)"
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
                f"  {r.name:<{width}}  {c:<12} {r.clients:>7}  {_num(r.writes):>7} {win}  "
                f"{_num(r.reads):>7} {rout}"
            )
        if len(routers) < len(t.routers):
            out.append(f"  ... {len(t.routers) - len(routers)} more routers (--all)")
        out.append(
            "  (link columns: share of the router's own flows on the link to that neighbour)"
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


def _share(v: float, total: float) -> str:
    return f"{100 * v / total:.0f}%" if total > 0 else "-"


def _failure_lines(a: Analysis, show_all: bool) -> list[str]:
    out: list[str] = []
    if a.failure is not None:
        f = a.failure
        out.append(f"failure of {len(f.failed)} router(s): {', '.join(f.failed)}")
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
    return out


# ============================================================================ compare


@click.command("compare")
@click.argument("site", type=click.Path(exists=True, dir_okay=False))
@_format_option
@click.option(
    "--strategies",
    "only",
    default=None,
    metavar="LIST",
    help="comma-separated strategies (default: all)",
)
@click.option("--seed", default=0, show_default=True, help="seed of the random placement")
@model_options
@handles_input_errors(EXIT_INPUT)
def compare_cmd(
    site: str,
    fmt: str,
    only: str | None,
    seed: int,
    link_mb_s: float,
    ost_mb_s: float,
    weight_by: str,
) -> None:
    """Solve SITE with every strategy and compare them, one row per strategy.

    spine: share of write flows whose router is on another leaf module than the server;
    uplink: flows on the busiest leaf uplink; uniform: max flows on a torus link with every
    client writing to every OST; placed/default/random: max flows on a link with one client
    per OST, chosen by `lnetgen place clients`, in node order, or at random (writes/reads);
    N-1: the worst single-router failure (clients x nets lost / falling back).

    Exit status: 0 ok, 1 a strategy could not be solved, 2 bad input or usage.
    """
    from lnetgen.analyze import compare
    from lnetgen.api import load_site
    from lnetgen.solve import strategy_names

    site_obj, warnings = load_site(site)
    print_diags(warnings)
    names = None
    if only:
        names = [s.strip() for s in only.split(",") if s.strip()]
        unknown = [s for s in names if s not in strategy_names()]
        if unknown:
            raise click.BadParameter(
                f"unknown {', '.join(unknown)} (known: {', '.join(strategy_names())})",
                param_hint="--strategies",
            )
    rows = compare(site_obj, names, _settings(link_mb_s, ost_mb_s, weight_by), seed)
    if fmt == "json":
        click.echo(json.dumps([r.as_dict() for r in rows], indent=1, sort_keys=True))
    else:
        for line in format_compare(rows):
            click.echo(line)
    sys.exit(EXIT_FINDINGS if any(r.error for r in rows) else EXIT_OK)


def format_compare(rows: list[CompareRow]) -> list[str]:
    """The text table of ``lnetgen compare``."""
    head = (
        f"{'strategy':<17} {'nets':>5} {'spine':>7} {'uplink':>7} {'uniform w/r':>13} "
        f"{'placed w/r':>13} {'default w/r':>13} {'random w/r':>13} {'N-1 lost/back':>14} "
        f"{'losing':>6}"
    )
    out = [head]
    for r in rows:
        if r.error:
            out.append(f"{r.strategy:<17} not solvable: {r.error}")
            continue
        out.append(
            f"{r.strategy:<17} {r.nets:>5} {_pct(r.spine_fraction):>7} {_num(r.uplink_max):>7} "
            f"{_pair(r.uniform_write_max, r.uniform_read_max):>13} "
            f"{_pair(r.placed_write_max, r.placed_read_max):>13} "
            f"{_pair(r.default_write_max, r.default_read_max):>13} "
            f"{_pair(r.random_write_max, r.random_read_max):>13} "
            f"{f'{r.worst_lost}/{r.worst_fallback}':>14} {r.routers_losing_a_net:>6}"
        )
    out.append("")
    out.append(
        "spine: write flows crossing a spine; uplink: flows on the busiest leaf uplink; "
        "w/r: max flows on one torus link, writes/reads"
    )
    out.append(
        "placed/default/random: one client per OST chosen nearest (lnetgen place clients) / in "
        "node order / at random; N-1: worst single router, clients x nets lost/falling back; "
        "losing: routers whose loss leaves a net unreachable"
    )
    return out


def _pair(a: float, b: float) -> str:
    return f"{a:.1f}/{b:.1f}"


# ============================================================================ place


@click.group("place")
def place_group() -> None:
    """Place I/O: the best clients for given OSS, or the best OSTs for a client."""


@place_group.command("clients")
@click.argument("site", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--oss", "oss", multiple=True, required=True, metavar="NAME", help="an OSS (repeatable)"
)
@click.option(
    "--per-oss",
    type=click.IntRange(min=1),
    default=None,
    help="clients per OSS (default: one per OST of the OSS)",
)
@STRATEGY_OPT
@_plan_option
@click.option(
    "--from",
    "pool",
    default=None,
    metavar="NODESET",
    help="choose only among these clients (e.g. a job's allocation)",
)
@click.option("--seed", default=0, show_default=True, help="seed of the random comparison")
@_format_option
@model_options
@handles_input_errors(EXIT_INPUT)
def place_clients_cmd(
    site: str,
    oss: tuple[str, ...],
    per_oss: int | None,
    strategy: str | None,
    plan_path: str | None,
    pool: str | None,
    seed: int,
    fmt: str,
    link_mb_s: float,
    ost_mb_s: float,
    weight_by: str,
) -> None:
    """The nearest free clients for each OSS (seed 000 §5), greedy in the order given.

    Distance: torus hops from a client to the router(s) it uses for that OSS's net in the
    plan.  Prints a node set per OSS, then the torus link loads of the placed clients against
    the same number of clients in node order and at random (one flow per client and OST).

    Exit status: 0 ok, 2 bad input (unknown OSS, too few free clients, usage).
    """
    from lnetgen import place
    from lnetgen.analyze import index_plan

    site_obj, plan = _load(site, strategy, plan_path)
    settings = _settings(link_mb_s, ost_mb_s, weight_by)
    ix = index_plan(site_obj, plan, settings)
    available = place.clients_by_name(site_obj, pool) if pool else None
    placed = place.place_clients(site_obj, plan, oss, per_oss, available, ix)
    cmp = None
    if site_obj.torus is not None:
        cmp = place.compare_placements(site_obj, plan, oss, per_oss, settings, seed, available, ix)
    if fmt == "json":
        doc: dict[str, Any] = {
            "site": plan.site,
            "strategy": plan.strategy,
            "placement": _plain(placed),
            "loads": _plain(cmp) if cmp is not None else None,
        }
        click.echo(json.dumps(doc, indent=1, sort_keys=True))
    else:
        for line in format_placement(placed, cmp, plan.strategy):
            click.echo(line)
    sys.exit(EXIT_OK)


def _plain(obj: Any) -> Any:
    from lnetgen.analyze import plain

    return plain(obj)


def format_placement(
    placed: ClientPlacement, cmp: PlacementComparison | None, strategy: str
) -> list[str]:
    """The text report of ``lnetgen place clients``."""
    width = max(len(o.server) for o in placed.per_oss)
    out = [f"strategy {strategy}: clients per OSS, nearest first (hops to their own gateways)"]
    for o in placed.per_oss:
        out.append(
            f"  {o.server:<{width}}  via {','.join(o.routers) or '-'}  {len(o.clients)} clients, "
            f"hops mean {_num(o.mean_hops)} max {_num(o.max_hops, 0)}  {o.nodes}"
        )
    if cmp is not None:
        out.append("")
        out.append("torus link loads for these OSS (max / p99 flows per link, links saturated):")
        for pl in (cmp.placed, cmp.default, cmp.random):
            out.append(
                f"  {pl.method:<8} hops {_num(pl.mean_hops):>6}   writes "
                f"{_num(pl.writes.max):>6} / {_num(pl.writes.p99):>5}, "
                f"{pl.writes.saturated:>4} saturated   reads "
                f"{_num(pl.reads.max):>6} / {_num(pl.reads.p99):>5}, {pl.reads.saturated:>4} "
                "saturated"
            )
    return out


@place_group.command("osts")
@click.argument("site", type=click.Path(exists=True, dir_okay=False))
@click.option("--client", "client", required=True, metavar="NODE", help="the client node")
@click.option("--count", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--fs", "fs", default=None, metavar="NAME", help="only OSTs of this file system")
@click.option(
    "--path",
    "path",
    default="FILE",
    show_default=True,
    help="file name to put in the lfs setstripe lines",
)
@STRATEGY_OPT
@_plan_option
@_format_option
@handles_input_errors(EXIT_INPUT)
def place_osts_cmd(
    site: str,
    client: str,
    count: int,
    fs: str | None,
    path: str,
    strategy: str | None,
    plan_path: str | None,
    fmt: str,
) -> None:
    """The OSTs whose OSS the client reaches through the nearest routers (seed 004), as
    `lfs setstripe -c 1 -i INDEX` lines.

    Exit status: 0 ok, 2 bad input (unknown client or file system, usage).
    """
    from lnetgen.place import place_osts

    site_obj, plan = _load(site, strategy, plan_path)
    picks = place_osts(site_obj, plan, client, count, fs)
    if fmt == "json":
        click.echo(json.dumps([_plain(p) for p in picks], indent=1, sort_keys=True))
    else:
        multi = len({p.fs for p in picks}) > 1 or fs is None
        for p in picks:
            where = f"{p.fs} " if multi else ""
            click.echo(
                f"{p.setstripe(path)}  # {where}OST {p.index} on {p.server} via "
                f"{','.join(p.routers)}, {_num(p.hops, 1)} hops"
            )
    sys.exit(EXIT_OK)


#: The commands this module adds to ``lnetgen``.
COMMANDS: tuple[click.Command, ...] = (analyze_cmd, compare_cmd, place_group)

__all__ = ["COMMANDS", "analyze_cmd", "compare_cmd", "place_group"]
