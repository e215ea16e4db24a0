"""The ``lnetgen`` command: parses options, calls the library, prints, sets exit codes.

This package is the only place that imports click or prints; one module per command family
(``diff``, ``analyze``, ``fabric``, ``report``) registers itself at the end of this file.

Exit codes (like diff(1)): 0 ok; 1 findings (invalid inventory, drift, failed checks);
2 usage or input error.  This is the only module that imports click or prints.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from lnetgen import __version__
from lnetgen.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    STRATEGY_OPT,
    handles_input_errors,
)
from lnetgen.cli.common import print_diags as _print_diags
from lnetgen.diagnostics import errors, to_json


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="lnetgen")
def main() -> None:
    """Plan, generate, diff and analyze Lustre LNet fine-grained routing.

    Exit status: 0 ok, 1 findings (invalid inventory, drift), 2 usage or input error.
    """


@main.command()
@click.argument("site", type=click.Path(dir_okay=True, allow_dash=False))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def validate(site: str, fmt: str) -> None:
    """Check an inventory: schema, then meaning, then a dry solve of its default strategy
    (other strategies are listed as notes).  Exit 0 valid, 1 errors, 2 usage."""
    import os

    from lnetgen.drysolve import dry_solve

    if not os.path.exists(site):
        raise click.BadParameter(f"{site}: no such file", param_hint="SITE")
    _site, diags = dry_solve(site)
    if fmt == "json":
        click.echo(to_json(diags))
    else:
        _print_diags(diags, err=False)
        nerr = len(errors(diags))
        nwarn = sum(1 for d in diags if d.severity == "warning")
        ninfo = sum(1 for d in diags if d.severity == "info")
        notes = f", {ninfo} note(s)" if ninfo else ""
        click.echo(
            f"{site}: {'valid' if not nerr else 'invalid'} "
            f"({nerr} error(s), {nwarn} warning(s){notes})"
        )
    sys.exit(EXIT_FINDINGS if errors(diags) else EXIT_OK)


@main.command()
@click.option("--plan", "which", flag_value="plan", help="print the plan schema instead")
def schema(which: str | None) -> None:
    """Print the inventory JSON Schema (for editors)."""
    from lnetgen.resources import schema_text

    click.echo(schema_text("plan.schema.json" if which == "plan" else "site.schema.json"), nl=False)


@main.command()
def strategies() -> None:
    """List the routing layouts, one line each."""
    from lnetgen.strategies import REGISTRY

    width = max(len(n) for n in REGISTRY)
    for name, strat in REGISTRY.items():
        click.echo(f"{name:<{width}}  {strat.summary}")


def _summary(plan: Any) -> list[str]:
    st = plan.stats
    lines = [
        f"site {plan.site}  strategy {plan.strategy}",
        f"  storage nets     {st['storage_nets']}",
        f"  client classes   {st['client_classes']}",
        f"  routes/client    {st['routes_per_client']['min']}-{st['routes_per_client']['max']}",
        f"  router load      {st['router_load']['min']}-{st['router_load']['max']} "
        "clients per router, summed over nets (priority 0)",
    ]
    if st.get("idle_routers"):
        lines.append(f"  idle routers     {st['idle_routers']}")
    if "total_hops" in st:
        lines.append(f"  torus hops       {st['total_hops']} (client->chosen router, all sets)")
    return lines


@main.command()
@click.argument("site", type=click.Path(exists=True, dir_okay=False))
@STRATEGY_OPT
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="write plan.json here",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json prints the plan on stdout",
)
@handles_input_errors()
def solve(site: str, strategy: str | None, out: str | None, fmt: str) -> None:
    """Solve SITE into a routing plan; print a summary (or the plan with --format json)."""
    from lnetgen.api import solve_site
    from lnetgen.write import write_file

    _site, plan, warnings = solve_site(site, strategy)
    _print_diags(warnings)
    if out:
        write_file(out, plan.to_json())
    if fmt == "json":
        click.echo(plan.to_json(), nl=False)
    else:
        for line in _summary(plan):
            click.echo(line)


@main.command()
@click.argument("site", type=click.Path(exists=True, dir_okay=False))
@STRATEGY_OPT
@click.option(
    "--out",
    "-o",
    "out",
    type=click.Path(file_okay=False),
    default="out",
    show_default=True,
    help="output directory (replaced atomically)",
)
@click.option(
    "--formats",
    "formats",
    default=None,
    metavar="LIST",
    help="comma-separated emitters, or 'all' (default: every emitter; modprobe is "
    "skipped with a warning when a routes= string exceeds 1024 bytes)",
)
@click.option(
    "--force",
    is_flag=True,
    help="overwrite files in --out that were edited by hand since lnetgen wrote them "
    "(files lnetgen did not write are never deleted)",
)
@handles_input_errors()
def generate(site: str, strategy: str | None, out: str, formats: str | None, force: bool) -> None:
    """Solve SITE and write everything a site deploys into --out.

    --out is replaced atomically under a lock; only files listed in its manifest.json with
    their recorded sha256 are ever replaced or deleted."""
    from lnetgen.api import generate as gen_fn
    from lnetgen.api import write_output

    gen = gen_fn(site, strategy, formats)
    _print_diags(gen.warnings)
    result = write_output(gen, out, force=force)
    click.echo(
        f"{out}: {len(gen.files)} files ({len(result.written)} written, "
        f"{len(result.unchanged)} unchanged, {len(result.removed)} removed); "
        f"strategy {gen.plan.strategy}"
    )
    for fmt, reason in sorted(gen.skipped.items()):
        click.echo(f"  {fmt}: skipped", err=True)
        del reason


# ---- command families in their own modules
from lnetgen.cli import fabric as _fabric  # noqa: E402

main.add_command(_fabric.command)
from lnetgen.cli import diff as _diff  # noqa: E402

main.add_command(_diff.command, "diff")
from lnetgen.cli import analyze as _analyze  # noqa: E402

for _cmd in _analyze.COMMANDS:
    main.add_command(_cmd)
from lnetgen.cli import report as _report  # noqa: E402

main.add_command(_report.command)
