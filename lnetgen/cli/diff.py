"""``lnetgen diff``: the proposed plan against live dumps, per host, folded over node sets."""

from __future__ import annotations

import json
import sys

import click

from lnetgen.cli.common import EXIT_INPUT, STRATEGY_OPT, handles_input_errors, print_diags


@click.command("diff")
@click.argument("site", type=click.Path(dir_okay=False))
@STRATEGY_OPT
@click.option(
    "--live",
    "live_path",
    required=True,
    metavar="PATH",
    help="directory of per-host dumps (<host>, <host>.yaml, <host>.conf, ...), one "
    "dump, or an `lnetgen generate` output directory",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--plan-changes",
    is_flag=True,
    help="also print the changes as ordered lnetctl steps per node set",
)
@handles_input_errors(EXIT_INPUT, writes=False)
def command(site: str, strategy: str | None, live_path: str, fmt: str, plan_changes: bool) -> None:
    """Compare the plan for SITE with the live LNet state in PATH.

    Dumps may be `lnetctl export [--backup]`, `lnetctl route show -v`, `lnetctl net show`,
    `lctl get_param -n routes`, `lctl show_route` or modprobe `options lnet` files; the
    format is detected from the content.

    Exit status: 0 live equals the plan, 1 differences (or missing, unknown or unreadable
    dumps), 2 bad input (inventory, unreadable PATH, usage).
    """
    from lnetgen.api import solve_site
    from lnetgen.diff import diff, format_steps, format_text, to_dict
    from lnetgen.diff import plan_changes as order
    from lnetgen.live import read_live

    site_obj, plan, warnings = solve_site(site, strategy)
    print_diags(warnings)
    live = read_live(live_path)
    result = diff(plan, live, site_obj)
    steps = order(result) if plan_changes else None
    if fmt == "json":
        click.echo(json.dumps(to_dict(result, steps), indent=1, sort_keys=True))
    else:
        click.echo(format_text(result), nl=False)
        if steps is not None:
            click.echo("")
            click.echo(format_steps(steps, result), nl=False)
    sys.exit(result.exit_code)
