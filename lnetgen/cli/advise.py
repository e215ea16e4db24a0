"""``lnetgen advise``: what a site should change, judged by the throughput model -- printed
from the data ``lnetgen.advise`` returns."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from lnetgen.cli.common import (
    EXIT_OK,
    FILE_NAME,
    STRATEGY_OPT,
    TEXT,
    force_option,
    handles_input_errors,
    not_empty,
    site_argument,
    workload_option,
)
from lnetgen.cli.siteplan import format_option, load_plan, plan_option

if TYPE_CHECKING:  # the library is imported lazily at run time
    from lnetgen.advise import StripeAdvice
    from lnetgen.advise.routers import RouterAdvice, SeedGain
    from lnetgen.throughput import Prediction


@click.group("advise")
def advise_group() -> None:
    """Advice a site can act on: how to stripe files (``stripes``), where to put routers
    (``routers``), each with the bandwidth the model predicts for it."""


def _print(fmt: str, advice: object, lines: list[str]) -> None:
    """The advice as JSON or as its text lines; exit 0."""
    from lnetgen.analyze.plain import plain

    if fmt == "json":
        data: Any = plain(advice)
        click.echo(json.dumps(data, indent=1, sort_keys=True))
    else:
        for line in lines:
            click.echo(line)
    sys.exit(EXIT_OK)


def _units(*mb_s: float) -> tuple[float, str, str]:
    """Divisor, unit and format for figures printed together: GB/s from 10 GB/s, else MB/s."""
    return (1000.0, "GB/s", ".1f") if max(abs(v) for v in mb_s) >= 10_000 else (1.0, "MB/s", ".0f")


def _rate(mb_s: float) -> str:
    div, unit, f = _units(mb_s)
    return f"{mb_s / div:{f}} {unit}"


def _gb(p: Prediction | None) -> str:
    """A predicted aggregate: "n/a" without a figure, "at most X (bound: no ... rate)" when
    rates on its path are missing."""
    if p is None or p.aggregate_mb_s is None:
        return "n/a"
    figure = _rate(p.aggregate_mb_s)
    if p.unknown:
        return f"at most {figure} (bound: no {', '.join(p.unknown)} rate)"
    return figure


def _span(values: list[float | None], scale: list[float | None] | None = None) -> str:
    """The lowest and highest of ``values`` ("n/a" when one is missing), in the units of
    ``scale`` (the figures printed next to them; default: ``values``)."""
    known = [v for v in values if v is not None]
    if len(known) < len(values) or not known:
        return "n/a"
    div, unit, f = _units(*known, *[v for v in scale or [] if v is not None])
    lo, hi = f"{min(known) / div:{f}}", f"{max(known) / div:{f}}"
    return f"{lo} {unit}" if lo == hi else f"{lo}-{hi} {unit}"


def format_stripes(a: StripeAdvice) -> list[str]:
    """The text of ``lnetgen advise stripes``."""
    from lnetgen.advise.stripes import ost_list

    given = not a.no_advice
    out = [
        f"site {a.site}  strategy {a.strategy}  file system {a.fs}: {a.osts} OSTs, "
        f"{a.group_osts} behind each storage net (LNet group)",
        f"  stripe limit {a.max_stripe} ({a.limit_source})",
    ]
    lead = "  " if given else "  judged: "
    listed = a.job and any(" -o " in c for c in a.commands)
    if a.job and (listed or not given):
        out.append(f"{lead}the job {a.job}: the {a.stripe_count} OSTs of the groups nearest to it")
    elif a.job:
        out.append(f"  the job {a.job}: stripe count {a.stripe_count}, OSTs of Lustre's choosing")
    elif a.multiple_fits and a.stripe_count % a.group_osts and not a.pools:
        out.append(
            f"{lead}stripe count {a.stripe_count}, the limit: the model predicts more for it "
            f"than for a multiple of {a.group_osts}"
        )
    elif not a.multiple_fits:
        out.append(
            f"{lead}stripe count {a.stripe_count}, the limit: no multiple of {a.group_osts} "
            f"fits under it"
        )
    else:
        out.append(
            f"{lead}stripe count {a.stripe_count}: a multiple of {a.group_osts}, so every "
            "group's routers carry an equal share (seed 001)"
        )
    if a.pools:
        out.append(
            f"{lead}{len(a.pools)} pools of whole groups ({a.osts} OSTs > {a.max_stripe})"
            + ("; run the lctl lines on the MGS:" if given else "")
        )
    out.extend(f"    {c}" for c in a.commands)
    for w in a.weighed:
        out.append(
            f"  weighed{f' (figures at most: {w.bound})' if w.bound else ''}: {w.kept} "
            f"{_span(list(w.kept_mb_s), list(w.other_mb_s))} against "
            f"{w.other} {_span(list(w.other_mb_s), list(w.kept_mb_s))}: {w.why}"
        )
    for n in a.notes:
        out.append(f"  note: {n}")
    if not given:
        out.append(f"  no advice: {a.no_advice}")
    seeds = tuple(j.seed for j in a.judged)
    who = f"the job's {a.ranks} rank(s)" if a.job else f"{a.ranks} rank(s) on random nodes"
    files = "a shared file per pool" if a.pools else "a shared file"
    out.append(
        f"  predicted, {files} written by {who}"
        + (f" (seed {seeds[0]})" if seeds and not a.job else "")
        + f": {_gb(a.advised)} with {'this advice' if given else 'the layout judged'}, "
        f"{_gb(a.default)} with Lustre's default layout (stripe count 1)"
    )
    if len(seeds) > 1:
        out.append(
            f"  over seeds {ost_list(seeds)}: {_span([j.advised_mb_s for j in a.judged])} "
            f"against {_span([j.default_mb_s for j in a.judged])}"
            + (", a gain on every one" if given else "")
        )
    if given and a.advised is not None and a.advised.bottleneck is not None:
        b = a.advised.bottleneck
        out.append(f"  bottleneck with the advice: {b.kind} {b.name} ({100 * b.utilisation:.0f} %)")
    return out


def _max_stripe(value: int | None) -> int | None:
    """``--max-stripe``, refused above Lustre's ``LOV_MAX_STRIPE_COUNT`` (2000): no MDT
    stores a wider layout, so an administrator asking for more has mistyped, and advice to
    run ``lfs setstripe -c 3000`` would be refused (or clamped) by the MDS."""
    from lnetgen.advise.stripes import MAX_STRIPE

    if value is not None and value > MAX_STRIPE:
        raise click.BadParameter(
            f"{value} is above Lustre's stripe limit LOV_MAX_STRIPE_COUNT, {MAX_STRIPE}",
            param_hint="--max-stripe",
        )
    return value


@advise_group.command("stripes")
@site_argument
@click.option(
    "--fs",
    "fs",
    type=TEXT,
    default=None,
    metavar="NAME",
    help="the file system (needed when several have OSTs)",
)
@click.option(
    "--job",
    "job",
    default=None,
    callback=not_empty,
    metavar="NODESET",
    help="the job's nodes ('nid[00001-00064]'): stripe its file over the nearest groups",
)
@click.option(
    "--max-stripe",
    type=click.IntRange(min=1),
    default=None,
    callback=lambda _ctx, _param, value: _max_stripe(value),
    help="the stripe limit: 2000 with a ZFS MDT or an ldiskfs MDT with ea_inode, 160 "
    "without; default: 2000 when the site's servers run Lustre 2.13 or later, else 160",
)
@click.option(
    "--path",
    "path",
    type=FILE_NAME,
    default="FILE",
    show_default=True,
    help="file name in the lfs lines",
)
@STRATEGY_OPT
@plan_option
@force_option("use a --plan solved from another version of SITE")
@format_option
@handles_input_errors()
def stripes_cmd(
    site: str,
    fs: str | None,
    job: str | None,
    max_stripe: int | None,
    path: str,
    strategy: str | None,
    plan_path: str | None,
    force: bool,
    fmt: str,
) -> None:
    """Stripe count, pools and a job's OSTs for FS, as lfs/lctl lines, with the predicted
    bandwidth of the advice against Lustre's default layout; given only when the model
    predicts a gain (with the OST rate known, on every one of five random draws), else
    "no advice" and why.

    Exit status: 0 ok, 1 an invalid inventory, 2 bad input (unknown file system or nodes,
    usage).
    """
    from lnetgen.advise import advise_stripes
    from lnetgen.cli.common import about_option, as_input_error
    from lnetgen.diagnostics import InputError
    from lnetgen.place import clients_by_name

    site_obj, plan = load_plan(site, strategy, plan_path, force)
    try:
        members = clients_by_name(site_obj, job) if job else None
    except InputError as exc:
        raise about_option("--job", exc) from None
    try:
        a = advise_stripes(site_obj, plan, fs, members, job or "", max_stripe, path)
    except InputError as exc:
        raise as_input_error(exc) from None
    _print(fmt, a, format_stripes(a))


def _seed_lines(rows: tuple[SeedGain, ...]) -> list[str]:
    """One line per seed: the aggregate before and after, and the gain."""
    out = []
    for r in rows:
        if r.before_mb_s is None or r.after_mb_s is None:
            out.append(f"    seed {r.seed}: n/a")
            continue
        div, unit, f = _units(r.before_mb_s, r.after_mb_s)
        d = (r.after_mb_s - r.before_mb_s) / div
        out.append(
            f"    seed {r.seed}: {r.before_mb_s / div:{f}} -> {r.after_mb_s / div:{f}} {unit} "
            f"({d:+{f}})"
        )
    return out


def format_routers(a: RouterAdvice) -> list[str]:
    """The text of ``lnetgen advise routers``."""
    from lnetgen.advise.stripes import ost_list

    seeds = ost_list(a.seeds)
    judged = (
        f"judged on seeds {seeds} of the workload's random draw"
        if len(a.seeds) > 1
        else "the workload draws no random nodes: judged once"
    )
    out = [
        f"site {a.site}  strategy {a.strategy}  workload {a.workload}",
        f"  up to {a.count} router(s) moved to {a.slots} free slot(s): {a.method} search, "
        f"{a.evaluated} prediction(s); {judged}",
    ]
    if a.no_advice:
        out[1] = f"  up to {a.count} router(s), {a.slots} free slot(s): not searched"
        out.append(f"  no advice: {a.no_advice}")
        out.append(f"  seed {a.seeds[0]}: {_gb(a.before)} now")
        return out
    if not a.moves:
        out.append(
            "  no move predicts more bandwidth"
            + (" on every seed" if len(a.seeds) > 1 else "")
            + ": keep the routers where they are"
        )
    else:
        out.append("  inventory edits:")
        out.extend(f"    {e}" for e in a.edits)
        out.append(
            "  predicted writes"
            + (
                f", a gain on every seed (spread {_spread(a.by_seed)}):"
                if len(a.seeds) > 1
                else ":"
            )
        )
        out.extend(_seed_lines(a.by_seed))
    if a.rejected:
        held = sum(r.gained for r in a.rejected_by_seed)
        out.append(
            f"  not advised: the best move on seed {a.seeds[0]} alone gains on {held} of "
            f"{len(a.seeds)} seeds:"
        )
        out.extend(f"    {e}" for e in a.rejected)
        out.extend(_seed_lines(a.rejected_by_seed))
    if a.before.unknown and (a.moves or a.rejected):
        out.append(f"  the figures are bounds: no {', '.join(a.before.unknown)} rate")
    if a.bound_reason == "background":
        bound = "no bound: other jobs' streams would take what the torus frees"
    elif a.bound_mb_s is not None:
        bound = f"no placement can beat {_rate(a.bound_mb_s)} (the torus unconstrained)"
    else:
        bound = "no placement can beat n/a (the torus unconstrained)"
    out.append(f"  seed {a.seeds[0]}: {_gb(a.before)} now; {bound}")
    if a.relaid:
        span = " to ".join(a.relaid_span)
        out.append(
            "  note: the edit re-lays clients (linear coordinate rule, skip_routers): each "
            "client numbered between a moved router's old and new position shifts by one node "
            f"slot, and {a.relaid} of them ({span}) change chip; the prediction keeps every "
            "client where it is now"
        )
    if a.relaid_job:
        shown = ", ".join(a.relaid_job[:5]) + (", ..." if len(a.relaid_job) > 5 else "")
        out.append(
            f"  note: {len(a.relaid_job)} of the workload's own nodes ({shown}) change chip "
            "with this edit: the prediction does not hold for the layout it makes -- edit the "
            "inventory and run advise routers again (or pin the clients with a coordinates "
            "file)"
        )
    if a.strategy == "nearest-neighbor" and a.moves:
        out.append("  note: nearest-neighbor picks routers by position: solve again after the move")
    return out


def _spread(rows: tuple[SeedGain, ...]) -> str:
    gains = [
        r.after_mb_s - r.before_mb_s
        for r in rows
        if r.before_mb_s is not None and r.after_mb_s is not None
    ]
    if not gains:
        return "n/a"
    div, unit, f = _units(*gains)
    return f"{min(gains) / div:+{f}} to {max(gains) / div:+{f}} {unit}"


@advise_group.command("routers")
@site_argument
@click.option(
    "--count",
    type=click.IntRange(1, 10_000),
    default=1,
    show_default=True,
    help="routers to move at most",
)
@click.option(
    "--budget",
    type=click.IntRange(1, 10_000),
    default=400,
    show_default=True,
    help="placements the search may weigh: exact when every placement fits, greedy "
    "otherwise; each is predicted on up to five random draws (seeds)",
)
@workload_option
@STRATEGY_OPT
@plan_option
@force_option("use a --plan solved from another version of SITE")
@format_option
@handles_input_errors()
def routers_cmd(
    site: str,
    count: int,
    budget: int,
    workload: str | None,
    strategy: str | None,
    plan_path: str | None,
    force: bool,
    fmt: str,
) -> None:
    """Move up to COUNT routers to free router slots (topology.router_slots) of a torus
    client side where the workload's predicted bandwidth is highest; prints the inventory
    edits and the gain.  A workload on random nodes is judged on five draws (its seed and the
    four after it) and a move is advised only when it gains on every one.

    Exit status: 0 ok, 1 an invalid inventory, 2 bad input (a site whose client side is no
    torus -- a dragonfly or a fat tree: the message names what applies there --, no free slot,
    usage).
    """
    from lnetgen.api import advise_routers
    from lnetgen.cli.common import as_input_error, print_diags, workload_spec
    from lnetgen.diagnostics import InputError, UsageError, usage

    spec = workload_spec(workload)
    if spec is None:
        raise UsageError(
            [usage("--workload", "advise routers judges moves by a workload: not none")]
        )
    try:
        a, warnings = advise_routers(site, spec, count, budget, strategy, plan_path, force=force)
    except UsageError:
        raise
    except InputError as exc:
        if any(d.file for d in exc.diagnostics):  # the inventory or the plan: as it said
            raise
        raise as_input_error(exc) from None
    print_diags(warnings)
    _print(fmt, a, format_routers(a))


__all__ = ["advise_group", "format_routers", "format_stripes", "routers_cmd", "stripes_cmd"]
