"""``lnetgen advise``: what a site should change, judged by the throughput model -- printed
from the data ``lnetgen.advise`` returns."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from lnetgen.cli.common import (
    EXIT_OK,
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
    from lnetgen.advise.routers import RouterAdvice
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


def _gb(p: Prediction | None) -> str:
    if p is None or p.aggregate_mb_s is None:
        return "n/a"
    return f"{p.aggregate_mb_s / 1000:.1f} GB/s"


def format_stripes(a: StripeAdvice) -> list[str]:
    """The text of ``lnetgen advise stripes``."""
    out = [
        f"site {a.site}  strategy {a.strategy}  file system {a.fs}: {a.osts} OSTs, "
        f"{a.group_osts} behind each storage net (LNet group)",
        f"  stripe count {a.stripe_count}: a multiple of {a.group_osts}, so every group's "
        f"routers carry an equal share (seed 001), within the limit {a.max_stripe}",
    ]
    if a.pools:
        out.append(
            f"  {len(a.pools)} pools of whole groups ({a.osts} OSTs > {a.max_stripe}); run the "
            "lctl lines on the MGS:"
        )
    if a.job:
        out.append(f"  the job {a.job}: the {a.stripe_count} OSTs of the groups nearest to it")
    out.extend(f"    {c}" for c in a.commands)
    for n in a.notes:
        out.append(f"  note: {n}")
    out.append(
        f"  predicted, a shared file written by {a.ranks} rank(s): {_gb(a.advised)} with this "
        f"advice, {_gb(a.default)} with Lustre's default layout (stripe count 1)"
    )
    if a.advised is not None and a.advised.bottleneck is not None:
        b = a.advised.bottleneck
        out.append(f"  bottleneck with the advice: {b.kind} {b.name} ({100 * b.utilisation:.0f} %)")
    return out


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
    default=2000,
    show_default=True,
    help="the stripe limit: 2000 in current Lustre, 160 on an MDT without large xattrs",
)
@click.option(
    "--path",
    "path",
    type=TEXT,
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
    max_stripe: int,
    path: str,
    strategy: str | None,
    plan_path: str | None,
    force: bool,
    fmt: str,
) -> None:
    """Stripe count, pools and a job's OSTs for FS, as lfs/lctl lines, with the predicted
    bandwidth of the advice against Lustre's default layout.

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


def format_routers(a: RouterAdvice) -> list[str]:
    """The text of ``lnetgen advise routers``."""
    out = [
        f"site {a.site}  strategy {a.strategy}  workload {a.workload}",
        f"  up to {a.count} router(s) moved to {a.slots} free slot(s): {a.method} search, "
        f"{a.evaluated} prediction(s)",
    ]
    if not a.moves:
        out.append("  no move predicts more bandwidth: keep the routers where they are")
    else:
        out.append("  inventory edits:")
        out.extend(f"    {e}" for e in a.edits)
    out.append(
        f"  predicted writes: {_gb(a.before)} now, {_gb(a.after)} after the move; no placement "
        f"can beat {'n/a' if a.bound_mb_s is None else f'{a.bound_mb_s / 1000:.1f} GB/s'} "
        "(the torus unconstrained)"
    )
    if a.strategy == "nearest-neighbor" and a.moves:
        out.append("  note: nearest-neighbor picks routers by position: solve again after the move")
    return out


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
    help="predictions the search may make: exact when every placement fits, greedy otherwise",
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
    """Move up to COUNT routers to free router slots (topology.router_slots) where the
    workload's predicted bandwidth is highest; prints the inventory edits and the gain.

    Exit status: 0 ok, 1 an invalid inventory, 2 bad input (no torus, no free slot, usage).
    """
    from lnetgen.advise.routers import advise_routers
    from lnetgen.cli.common import as_input_error, workload_spec
    from lnetgen.diagnostics import InputError, UsageError, usage

    spec = workload_spec(workload)
    if spec is None:
        raise UsageError(
            [usage("--workload", "advise routers judges moves by a workload: not none")]
        )
    site_obj, plan = load_plan(site, strategy, plan_path, force)
    try:
        a = advise_routers(site_obj, plan, spec, count, budget)
    except InputError as exc:
        raise as_input_error(exc) from None
    _print(fmt, a, format_routers(a))


__all__ = ["advise_group", "format_routers", "format_stripes", "routers_cmd", "stripes_cmd"]
