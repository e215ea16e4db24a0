"""``lnetgen place``: the best clients for given OSS, or the best OSTs for a client, printed
from the data ``lnetgen.place`` returns.
"""

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
    about_option,
    force_option,
    handles_input_errors,
    model_options,
    not_empty,
    seed_option,
    site_argument,
)
from lnetgen.cli.nodesets import nodeset_option
from lnetgen.cli.siteplan import format_option, load_plan, model_settings, num, plan_option
from lnetgen.diagnostics import InputError, UsageError

if TYPE_CHECKING:  # the library is imported lazily at run time
    from lnetgen.place import ClientPlacement, PlacementComparison


@click.group("place")
def place_group() -> None:
    """Place I/O: the best clients for given OSS, or the best OSTs for a client."""


@place_group.command("clients")
@site_argument
@nodeset_option(
    "--oss",
    "oss",
    required=True,
    metavar="NAMES",
    help="OSS names or node sets ('oss[01-02]', 'oss01,oss02'); repeatable, placed in order",
)
@click.option(
    "--per-oss",
    type=click.IntRange(min=1),
    default=None,
    help="clients per OSS (default: one per OST of the OSS)",
)
@STRATEGY_OPT
@plan_option
@force_option("use a --plan solved from another version of SITE")
@click.option(
    "--from",
    "pool",
    default=None,
    callback=not_empty,
    metavar="NODESET",
    help="choose only among these clients (e.g. a job's allocation)",
)
@seed_option("seed of the random comparison")
@format_option
@model_options
@handles_input_errors()
def place_clients_cmd(
    site: str,
    oss: tuple[str, ...],
    per_oss: int | None,
    strategy: str | None,
    plan_path: str | None,
    force: bool,
    pool: str | None,
    seed: int,
    fmt: str,
    link_mb_s: float | None,
    ost_mb_s: float | None,
    weight_by: str,
) -> None:
    """The nearest free clients for each OSS (seed 000 §5), greedy in the order given.

    Distance: torus hops from a client to the router(s) it uses for that OSS's net in the
    plan.  Prints a node set per OSS, then the torus link loads of the placed clients against
    the same number of clients in node order and at random (one flow per client and OST).

    Exit status: 0 ok, 1 an invalid inventory, 2 bad input (unknown OSS, too few free
    clients, usage).
    """
    from lnetgen import place
    from lnetgen.analyze import index_plan

    site_obj, plan = load_plan(site, strategy, plan_path, force)
    settings = model_settings(site_obj, link_mb_s, ost_mb_s, weight_by)
    ix = index_plan(site_obj, plan, settings)
    try:
        available = place.clients_by_name(site_obj, pool) if pool else None
    except InputError as exc:
        raise about_option("--from", exc) from None
    cmp = None
    try:
        placed = place.place_clients(site_obj, plan, oss, per_oss, available, ix)
        if site_obj.torus is not None:
            cmp = place.compare_placements(
                site_obj, plan, oss, per_oss, settings, seed, available, ix
            )
    except InputError as exc:
        raise _about_options(exc) from None
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


def _about_options(exc: InputError) -> InputError:
    """``exc`` named by the option whose value it is about: too few free clients
    (``E-PLACE-FULL``) by ``--per-oss``, the count that asked for them (its default: one client
    per OST of the OSS); a server the plan does not have (``E-ANALYZE-SERVER``) by ``--oss``."""
    from dataclasses import replace

    option = {"E-PLACE-FULL": "--per-oss", "E-ANALYZE-SERVER": "--oss"}
    named = [d for d in exc.diagnostics if d.code in option and not d.file and d.path == "$"]
    if not named:
        return exc
    return UsageError(
        [replace(d, path=option[d.code]) if d in named else d for d in exc.diagnostics]
    )


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
            f"hops mean {num(o.mean_hops)} max {num(o.max_hops)}  {o.nodes}"
        )
    if cmp is not None:
        out.append("")
        out.append("torus link loads for these OSS (max / p99 flows per link, links saturated):")
        for pl in (cmp.placed, cmp.default, cmp.random):
            out.append(
                f"  {pl.method:<8} hops {num(pl.mean_hops):>6}   writes "
                f"{num(pl.writes.max):>6} / {num(pl.writes.p99):>5}, "
                f"{pl.writes.saturated:>4} saturated   reads "
                f"{num(pl.reads.max):>6} / {num(pl.reads.p99):>5}, {pl.reads.saturated:>4} "
                "saturated"
            )
    return out


@place_group.command("osts")
@site_argument
@click.option(
    "--client", "client", required=True, callback=not_empty, metavar="NODE", help="the client node"
)
@click.option("--count", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--fs", "fs", type=TEXT, default=None, metavar="NAME", help="only OSTs of this file system"
)
@click.option(
    "--path",
    "path",
    type=FILE_NAME,
    default="FILE",
    show_default=True,
    help="file name to put in the lfs setstripe lines",
)
@STRATEGY_OPT
@plan_option
@force_option("use a --plan solved from another version of SITE")
@format_option
@handles_input_errors()
def place_osts_cmd(
    site: str,
    client: str,
    count: int,
    fs: str | None,
    path: str,
    strategy: str | None,
    plan_path: str | None,
    force: bool,
    fmt: str,
) -> None:
    """The OSTs whose OSS the client reaches through the nearest routers (seed 004), as
    `lfs setstripe -c 1 -i INDEX` lines: one single-stripe file per OST, named PATH when
    --count is 1, else PATH.0, PATH.1, ... (lfs sets the layout of a new file only).

    Exit status: 0 ok, 1 an invalid inventory, 2 bad input (unknown client or file system,
    usage).
    """
    from lnetgen.place import place_osts
    from lnetgen.place.osts import file_names

    site_obj, plan = load_plan(site, strategy, plan_path, force)
    picks = place_osts(site_obj, plan, client, count, fs)
    if fmt == "json":
        click.echo(json.dumps([_plain(p) for p in picks], indent=1, sort_keys=True))
    else:
        multi = len({p.fs for p in picks}) > 1 or fs is None
        for p, name in zip(picks, file_names(path, len(picks)), strict=True):
            where = f"{p.fs} " if multi else ""
            click.echo(
                f"{p.setstripe(name)}  # {where}OST {p.index} on {p.server} via "
                f"{','.join(p.routers)}, {num(p.hops, 1)} hops"
            )
    sys.exit(EXIT_OK)


__all__ = ["format_placement", "place_clients_cmd", "place_group", "place_osts_cmd"]
