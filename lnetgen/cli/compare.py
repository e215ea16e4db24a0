"""``lnetgen compare``: every strategy side by side, one row each, printed from the rows
``lnetgen.analyze.compare`` returns."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from lnetgen.cli.analyze import gb_s, opensm_routes_said, pct, rates_lines
from lnetgen.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    NonEmptyPath,
    handles_input_errors,
    model_options,
    not_empty,
    opensm_option,
    print_diags,
    progress_bars,
    quiet_option,
    seed_option,
    site_argument,
    site_file,
    workload_option,
    workload_spec,
)
from lnetgen.cli.siteplan import format_option, model_settings, num

if TYPE_CHECKING:  # the library is imported lazily at run time
    from lnetgen.analyze import CompareRow, Settings
    from lnetgen.model import Site
    from lnetgen.throughput.fabric import FabricRoutes


@click.command("compare")
@site_argument
@format_option
@click.option(
    "--strategies",
    "only",
    default=None,
    callback=not_empty,
    metavar="LIST",
    help="comma-separated strategies (default: all)",
)
@seed_option("seed of the random placement")
@click.option(
    "--since",
    "since",
    default=None,
    type=NonEmptyPath(readable=False),  # site_file reads it: an unreadable file is E-FILE
    callback=site_file,
    metavar="OLD_SITE",
    help="an older inventory of the site: add each layout's churn (clients and routes changed)",
)
@model_options
@workload_option
@opensm_option
@quiet_option
@handles_input_errors()
def compare_cmd(
    site: str,
    fmt: str,
    only: str | None,
    seed: int,
    since: str | None,
    link_mb_s: float | None,
    ost_mb_s: float | None,
    weight_by: str,
    workload: str | None,
    opensm: str | None,
    quiet: bool,
) -> None:
    """Solve SITE with every strategy and compare them, one row per strategy.

    spine: share of write flows whose router is on another leaf module than the server;
    uplink: flows on the busiest leaf uplink; uniform: max flows on a torus link with every
    client writing to every OST; placed/default/random: max flows on a link with one client
    per OST, chosen by `lnetgen place clients`, in node order, or at random (writes/reads);
    N-1: the worst single-router failure (clients x nets lost / falling back); write/read:
    predicted GB/s, "<=" an upper bound where the site gives no rate for a component on the
    path; a rates legend names each rate's inventory source or option.  With --since
    OLD_SITE, a second table: per layout, how many clients change routes and how many routes
    change per client from OLD_SITE's plan to SITE's.

    Exit status: 0 ok, 1 a strategy could not be solved or an invalid inventory, 2 bad input
    or usage.
    """
    from lnetgen.analyze import compare
    from lnetgen.api import load_site
    from lnetgen.diagnostics import UsageError, usage
    from lnetgen.solve import strategy_names

    site_obj, warnings = load_site(site)
    print_diags(warnings)
    names = None
    if only:
        # each once, in the order given (a name repeated 10,000 times ran 10,000 solves)
        names = list(dict.fromkeys(s.strip() for s in only.split(",") if s.strip()))
        unknown = [s for s in names if s not in strategy_names()]
        if unknown:
            known = ", ".join(strategy_names())
            raise UsageError(
                [usage("--strategies", f"unknown {', '.join(unknown)} (known: {known})")]
            )
    old = None
    if since is not None:
        old, old_warnings = load_site(since)
        print_diags(old_warnings)
    spec = workload_spec(workload)
    routes, storage = opensm_routes_said(site_obj, opensm, spec)
    settings = model_settings(site_obj, link_mb_s, ost_mb_s, weight_by)
    rows = compare(
        site_obj,
        names,
        settings,
        seed,
        since=old,
        progress=progress_bars(quiet),
        workload=spec,
        fabric_routes=routes,
        storage_routes=storage,
    )
    rates = Rates.of(site_obj, settings, routes, storage)
    if fmt == "json":
        click.echo(json.dumps([rates.row(r) for r in rows], indent=1, sort_keys=True))
    else:
        for line in format_compare(rows, rates):
            click.echo(line)
    sys.exit(EXIT_FINDINGS if any(r.error for r in rows) else EXIT_OK)


@dataclass(frozen=True)
class Rates:
    """Where a compare table's rates come from, for every row alike: the flow counts'
    ``settings``, the entries of the rates the site gives per kind of resource
    (``sources``), and the kinds it gives none for (``unknown``): a predicted figure is then
    an upper bound (``lnetgen.throughput.sources.unrated``)."""

    settings: Settings | None = None
    sources: tuple[tuple[str, tuple[str, ...]], ...] = ()
    unknown: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        site: Site,
        settings: Settings,
        routes: FabricRoutes | None = None,
        storage: FabricRoutes | None = None,
    ) -> Rates:
        from lnetgen.throughput.sources import site_entries, unrated

        entries = site_entries(site, routes, storage)
        return cls(settings, tuple(entries.items()), unrated(site, routes, storage))

    @staticmethod
    def figure(x: float | None, bound: bool, unrouted: int = 0) -> str:
        """A predicted figure: ``"<=48.3 GB/s"`` when it is an upper bound (``bound``: a rate
        missing, a part not modelled, ranks nothing bounds), ``"<=30 MB/s"`` below 1 GB/s (never a
        nonzero figure as 0.0, ``lnetgen.analyze.units``); ``"0 (no route: 48 ranks)"`` when
        ``unrouted`` ranks cannot reach their OSTs (the run never completes)."""
        if unrouted:
            return f"0 (no route: {unrouted} ranks)"
        return ("<=" if x is not None and bound else "") + gb_s(x)

    def row(self, r: CompareRow) -> dict[str, Any]:
        """A row as JSON, with ``write_bound``/``read_bound`` (the figure is an upper bound),
        ``unknown`` (the kinds without rates), ``sources`` (per kind, the rates' entries) and
        ``flow_rates`` (the flow counts' rates with where each came from)."""
        d = r.as_dict()
        for op in ("write", "read"):
            d[f"{op}_bound"] = (
                r.is_bound(op) and d.get(f"{op}_mb_s") is not None and not d.get(f"{op}_unrouted")
            )
        d["unknown"] = list(self.unknown)
        d["sources"] = {k: list(v) for k, v in self.sources}
        s = self.settings
        flow = {}
        if s is not None and s.ost_mb_s is not None:
            flow["ost"] = {"mb_s": s.ost_mb_s, "source": s.ost_source}
        if s is not None and s.link_mb_s is not None:
            flow["link"] = {"mb_s": s.link_mb_s, "source": s.link_source}
        d["flow_rates"] = flow
        return d


def format_compare(rows: list[CompareRow], rates: Rates | None = None) -> list[str]:
    """The text table of ``lnetgen compare``; ``rates``: where its rates come from (its
    legend, and which figures are upper bounds)."""
    from lnetgen.analyze.units import flows

    rates = rates or Rates()
    cells = {
        r.strategy: (
            rates.figure(r.write_mb_s, r.is_bound("write"), r.write_unrouted),
            rates.figure(r.read_mb_s, r.is_bound("read"), r.read_unrouted),
        )
        for r in rows
    }
    w = max([10, *(len(c) for pair in cells.values() for c in pair)])
    head = (
        f"{'strategy':<17} {'nets':>5} {'spine':>7} {'uplink':>7} {'uniform w/r':>13} "
        f"{'placed w/r':>13} {'default w/r':>13} {'random w/r':>13} {'N-1 lost/back':>14} "
        f"{'losing':>6} {'fail load/lost':>14} {'write':>{w}} {'read':>{w}}  bottleneck (writes)"
    )
    out = [head]
    for r in rows:
        if r.error:
            out.append(f"{r.strategy:<17} not solvable: {r.error}")
            continue
        out.append(
            f"{r.strategy:<17} {r.nets:>5} {pct(r.spine_fraction):>7} {num(r.uplink_max):>7} "
            f"{_pair(r.uniform_write_max, r.uniform_read_max):>13} "
            f"{_pair(r.placed_write_max, r.placed_read_max):>13} "
            f"{_pair(r.default_write_max, r.default_read_max):>13} "
            f"{_pair(r.random_write_max, r.random_read_max):>13} "
            f"{f'{r.worst_lost}/{r.worst_fallback}':>14} {r.routers_losing_a_net:>6} "
            f"{f'{r.failure_load_ratio:.2f}x/{flows(r.failure_lost)}':>14} "
            f"{cells[r.strategy][0]:>{w}} {cells[r.strategy][1]:>{w}}  {r.bottleneck or 'n/a'}"
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
    out.append(
        "fail load/lost: over every single router, leaf and switch failure, the most write flows "
        "on a surviving router (over the busiest with all routers up) / the most flows to "
        "servers still in service left without a route (a leaf or switch failure also takes the "
        "servers cabled to it; flows lost with them are not counted: no layout routes them)"
    )
    out.append(
        "write/read: predicted bandwidth of the workload as IOR reports it (lnetgen.throughput; "
        "n/a where the site gives no rate that bounds it)"
    )
    if any(r.write_unrouted or r.read_unrouted for r in rows):
        out.append(
            "  no route: N ranks: the workload's ranks that cannot reach the OSTs of their "
            "file; they hang, the run never completes, and IOR reports nothing (0)"
        )
    crossed = sorted(
        {k for r in rows for k in (*r.write_unknown, *r.read_unknown)},
        key=lambda k: (rates.unknown.index(k) if k in rates.unknown else len(rates.unknown), k),
    )
    if any(c[0].startswith("<=") or c[1].startswith("<=") for c in cells.values()):
        why = [f"the site gives no {', '.join(crossed)} rate, which its paths cross (n/a, not "
               "limiting)"] if crossed else []  # fmt: skip
        gaps = sorted({g for r in rows for g in (*r.write_unmodelled, *r.read_unmodelled)})
        if gaps:
            why.append(f"not modelled: {'; '.join(gaps)}")
        if any(r.write_unbounded or r.read_unbounded for r in rows):
            why.append("some ranks cross no resource of known rate (analyze names them)")
        out.append(
            f"  <=: an upper bound, not a prediction: {'; '.join(why)}; one bound above "
            "another does not rank the strategies"
        )
    routed = next((r.opensm for r in rows if r.opensm), "")
    if routed:
        out.append(f"  following OpenSM's simulated routes of {routed}")
    if rates.settings is not None or rates.sources:
        out += rates_lines(rates.settings, rates.sources)
    return out + _dragonfly_lines(rows) + _churn_lines(rows)


def _dragonfly_lines(rows: list[CompareRow]) -> list[str]:
    """The dragonfly table: where each layout's client -> router write flows and router ->
    client read flows go (reads come back through the routers the servers pick)."""
    dfly = [(r.strategy, r.dragonfly, r.dragonfly_reads) for r in rows if r.dragonfly is not None]
    if not dfly:
        return []
    head = f"{'dragonfly':<17} {'flows':<6} {'switch':>7} {'group':>7} {'global':>7}"
    out = ["", head + "  busiest pair of groups"]
    for name, writes, reads in dfly:
        for label, g in (("writes", writes), ("reads", reads)):
            if g is None:
                continue
            share = [
                x / g.flows if g.flows else 0.0
                for x in (g.same_switch, g.same_group, g.cross_group)
            ]
            busiest = f"{g.busiest} {g.busiest_flows:.1f} flows" if g.busiest else "none"
            cells = " ".join(f"{pct(x):>7}" for x in share)
            out.append(f"{name:<17} {label:<6} {cells}  {busiest}")
    out.append(
        "switch/group/global: write flows (client -> router) and read flows (router -> client) "
        "on the client's switch, over a local link of its group, across a global link (minimal "
        "routes)"
    )
    return out


def _churn_lines(rows: list[CompareRow]) -> list[str]:
    """The churn table of ``compare --since``."""
    churned = [(r.strategy, r.churn) for r in rows if r.churn is not None]
    if not churned:
        return []
    out = ["", f"{'churn since':<17} {'clients':>8} {'changed':>14} {'routes/client':>14}"]
    for name, c in churned:
        out.append(
            f"{name:<17} {c.clients:>8} {f'{c.changed} ({c.changed_fraction:.0%})':>14} "
            f"{f'{c.routes_per_client:.2f} of {c.mean_routes:.1f}':>14}"
        )
    out.append(
        "churn: clients of both inventories whose route table changes, and routes removed + "
        "added per client (a renumbered net counts: every host's file changes)"
    )
    return out


def _pair(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "n/a"  # no torus
    return f"{a:.1f}/{b:.1f}"


__all__ = ["Rates", "compare_cmd", "format_compare"]
