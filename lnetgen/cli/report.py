"""``lnetgen report``: the HTML pictures of a site's plan (or of every strategy side by side).

Register with ``main.add_command(report.command)``.
"""

from __future__ import annotations

import sys

import click
from click.core import ParameterSource

from lnetgen.cli.analyze import opensm_routes_said
from lnetgen.cli.common import (
    EXIT_OK,
    STRATEGY_OPT,
    NonEmptyPath,
    handles_input_errors,
    model_options,
    not_empty,
    opensm_option,
    print_diags,
    progress_bars,
    quiet_option,
    site_argument,
    workload_option,
    workload_spec,
)


@click.command("report")
@site_argument
@STRATEGY_OPT
@click.option(
    "--compare",
    is_flag=True,
    help="every strategy (or --strategies) side by side instead of one",
)
@click.option(
    "--strategies",
    "only",
    default=None,
    callback=not_empty,
    metavar="LIST",
    help="with --compare: comma-separated strategies (default: all)",
)
@click.option(
    "--out",
    "-o",
    "out",
    type=NonEmptyPath(dir_okay=False),
    default="report.html",
    show_default=True,
    help="the HTML file to write (replaced atomically)",
)
@click.option(
    "--max-slices",
    type=click.IntRange(min=0),
    default=None,
    help="torus z-slices drawn per direction, most loaded first (default 6, 2 with --compare)",
)
@click.option(
    "--max-switches",
    type=click.IntRange(min=0),
    default=None,
    help="switch boxes drawn per strategy; the rest are summarized (default 24, 8 with --compare)",
)
@model_options
@workload_option
@opensm_option
@quiet_option
@handles_input_errors(writes=True)
def command(
    site: str,
    strategy: str | None,
    compare: bool,
    only: str | None,
    out: str,
    max_slices: int | None,
    max_switches: int | None,
    link_mb_s: float | None,
    ost_mb_s: float | None,
    weight_by: str,
    workload: str | None,
    opensm: str | None,
    quiet: bool,
) -> None:
    """Write one self-contained HTML file of pictures for the plan of SITE.

    The storage fabric (switches, leaf modules, routers and servers on their ports, coloured by
    storage LNet, spine crossings as bars), the torus (per-link load as heat maps of the most
    loaded X-Y slices, writes and reads), router-load and link-load histograms, the N-1 failure
    summary, and the validation warnings and route-table findings.  Inline SVG and CSS only:
    no script, nothing fetched.  With --compare every strategy is solved and drawn side by side
    on shared scales.

    Exit status: 0 written, 1 an invalid inventory, 2 bad input or usage.
    """
    from lnetgen.api import load_site
    from lnetgen.report import build_report, render_html
    from lnetgen.solve import strategy_names
    from lnetgen.traffic.settings import settings_for
    from lnetgen.write import write_file

    if click.get_current_context().get_parameter_source("out") is ParameterSource.DEFAULT:
        _default_out_is_ours(out)
    if compare and strategy:
        raise click.UsageError("give --strategy or --compare, not both")
    if only and not compare:
        raise click.UsageError("--strategies goes with --compare")
    known = strategy_names()
    if compare:
        names = [s.strip() for s in only.split(",") if s.strip()] if only else known
        unknown = [s for s in names if s not in known]
        if unknown or not names:
            what = ", ".join(unknown) or "(empty list)"
            raise click.BadParameter(
                f"unknown {what} (known: {', '.join(known)})", param_hint="--strategies"
            )
    spec = workload_spec(workload)
    site_obj, warnings = load_site(site)
    print_diags(warnings)
    if not compare:
        name = strategy or site_obj.strategy.default
        if name not in known:
            raise click.BadParameter(
                f"unknown {name} (known: {', '.join(known)})", param_hint="--strategy"
            )
        names = [name]
    report = build_report(
        site_obj,
        names,
        warnings,
        settings=settings_for(site_obj, link_mb_s, ost_mb_s, weight_by),
        max_switches=max_switches,
        max_slices=max_slices,
        progress=progress_bars(quiet),
        workload=spec,
        routes=opensm_routes_said(site_obj, opensm, spec),
    )
    html = render_html(report)
    write_file(out, html)
    size = len(html.encode("utf-8"))
    click.echo(f"{out}: {size:,} bytes; site {report.site}, strategy {', '.join(names)}")
    sys.exit(EXIT_OK)


#: What every report lnetgen writes carries in its head (templates/report/report.html.j2).
_GENERATOR = b'<meta name="generator" content="lnetgen '


def _default_out_is_ours(out: str) -> None:
    """Without ``-o`` the report goes to ``report.html`` in the current directory: a file of
    that name lnetgen did not write (no generator mark in its head) is the user's, and is not
    replaced unasked.  Naming it with ``-o`` replaces it, as any ``-o`` does."""
    import os
    import stat

    from lnetgen.diagnostics import Diagnostic, UsageError

    try:
        with open(os.open(out, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW), "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return  # not a file to replace: write_file says what it is
            head = fh.read(4096)
    except OSError:
        return  # absent (written new), or a link: write_file refuses it
    if _GENERATOR not in head:
        message = (
            "exists and is not a report lnetgen wrote; give -o to write elsewhere (or "
            "-o report.html to replace it)"
        )
        raise UsageError([Diagnostic(out, 0, 0, "error", "E-OUTPUT-FOREIGN", "$", message)])


__all__ = ["command"]
