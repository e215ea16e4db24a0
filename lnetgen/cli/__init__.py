"""The ``lnetgen`` command: parses options, calls the library, prints, sets exit codes.

This package is the only place that imports click or prints; one module per command family
(``diff``, ``analyze``, ``fabric``, ``report``) registers itself at the end of this file.

Exit codes (like diff(1)): 0 ok; 1 findings (invalid inventory, drift, failed checks);
2 usage or input error (see ``lnetgen.cli.common``), also when stdout cannot be written (one
line on stderr); 141 (128 + SIGPIPE, silently) when the reader of stdout has gone, as in
``lnetgen schema | head -c1`` (``lnetgen.cli.streams``, for every command, via the ``Lnetgen``
group).  This is the only package that imports click or prints.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from lnetgen import __version__
from lnetgen.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    STRATEGY_OPT,
    Lnetgen,
    NonEmptyPath,
    force_option,
    handles_input_errors,
    keep_nets_option,
    not_empty,
    noted_interruption,
    plan_option,
    progress_bars,
    quiet_option,
    saved_warnings,
    site_argument,
)
from lnetgen.cli.common import print_diags as _print_diags
from lnetgen.diagnostics import Diagnostic, errors, to_json

if TYPE_CHECKING:
    from lnetgen.write import WriteResult


@click.group(
    cls=Lnetgen,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="lnetgen")
def main() -> None:
    """Plan, generate, diff and analyze Lustre LNet fine-grained routing.

    Exit status: 0 ok, 1 findings (invalid inventory, drift), 2 usage or input error (also
    output that cannot be written), 141 when the reader of a pipe has gone.
    """


@main.command()
@site_argument
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def validate(site: str, fmt: str) -> None:
    """Check an inventory: schema, then meaning, then a dry solve of its default strategy
    (other strategies are listed as notes).  Exit 0 valid, 1 errors, 2 usage (a missing,
    unreadable or directory SITE, a bad option)."""
    import json

    from lnetgen.drysolve import dry_solve_acknowledged

    _site, diags, acked = dry_solve_acknowledged(site)
    if fmt == "json":
        doc = json.loads(to_json(diags))
        doc["acknowledged"] = [d.as_dict() for d in acked]
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
    else:
        _print_diags(diags, err=False)
        for d in acked:  # accepted by the inventory's acknowledge: entries, still listed here
            click.echo(d.format().replace(f"warning[{d.code}]", f"acknowledged[{d.code}]", 1))
        nerr = len(errors(diags))
        nwarn = sum(1 for d in diags if d.severity == "warning")
        ninfo = sum(1 for d in diags if d.severity == "info")
        notes = f", {ninfo} note(s)" if ninfo else ""
        tail = f", {len(acked)} acknowledged" if acked else ""
        click.echo(
            f"{site}: {'valid' if not nerr else 'invalid'} ({nerr} error(s), {nwarn} "
            f"warning(s){notes}{tail})"
        )
    sys.exit(EXIT_FINDINGS if errors(diags) else EXIT_OK)


@main.command()
@click.option("--plan", "which", flag_value="plan", help="print the plan schema instead")
def schema(which: str | None) -> None:
    """Print the inventory JSON Schema (for editors)."""
    from lnetgen.resources import schema_text

    click.echo(schema_text("plan.schema.json" if which == "plan" else "site.schema.json"), nl=False)


@main.command()
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def strategies(fmt: str) -> None:
    """List the routing layouts, one line each (or a JSON list of {name, summary})."""
    import json

    from lnetgen.strategies import REGISTRY

    if fmt == "json":
        items = [{"name": n, "summary": s.summary} for n, s in REGISTRY.items()]
        click.echo(json.dumps(items, indent=1, sort_keys=True))
        return
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
        "clients per router as LNet spreads them (a client with k priority-0 gateways counts "
        "1/k on each), summed over nets",
        "                   (analyze and report count every client routed through a router whole)",
    ]
    if st.get("idle_routers"):
        lines.append(f"  idle routers     {st['idle_routers']}")
    if "total_hops" in st:
        lines.append(f"  torus hops       {st['total_hops']} (client->chosen router, all sets)")
    return lines


@main.command()
@site_argument
@STRATEGY_OPT
@click.option(
    "--out",
    "out",
    type=NonEmptyPath(dir_okay=False),
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
@keep_nets_option
@handles_input_errors(writes=True)
def solve(
    site: str, strategy: str | None, out: str | None, fmt: str, keep_path: str | None
) -> None:
    """Solve SITE into a routing plan; print a summary (or the plan with --format json)."""
    from lnetgen.api import solve_site
    from lnetgen.write import write_file

    _site, plan, warnings = solve_site(site, strategy, keep_path)
    _print_diags(warnings)
    if out:
        write_file(out, plan.to_json())
    if fmt == "json":
        click.echo(plan.to_json(), nl=False)
    else:
        for line in _summary(plan):
            click.echo(line)


@main.command()
@site_argument
@STRATEGY_OPT
@plan_option
@click.option(
    "--out",
    "-o",
    "out",
    type=NonEmptyPath(file_okay=False),
    default="out",
    show_default=True,
    help="output directory (replaced atomically)",
)
@click.option(
    "--formats",
    "formats",
    default=None,
    callback=not_empty,
    metavar="LIST",
    help="comma-separated emitters, or 'all' (default: every emitter; modprobe is "
    "skipped with a warning when a routes= string exceeds 1024 bytes)",
)
@force_option(
    "overwrite files in --out that were edited by hand since lnetgen wrote them (files "
    "lnetgen did not write are never deleted); with --plan, also use a plan solved from "
    "another version of SITE"
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: what was written, unchanged, removed and skipped",
)
@quiet_option
@keep_nets_option
@handles_input_errors(writes=True)
def generate(
    site: str,
    strategy: str | None,
    plan_path: str | None,
    out: str,
    formats: str | None,
    force: bool,
    fmt: str,
    quiet: bool,
    keep_path: str | None,
) -> None:
    """Solve SITE (or take the reviewed --plan) and write everything a site deploys into --out.

    --out is replaced atomically under a lock; only files listed in its manifest.json with
    their recorded sha256 are ever replaced or deleted.  With --plan the tree is exactly the
    one solving would write for that plan.  Stopped (Ctrl-C, SIGTERM), it says whether --out
    holds the old tree or the new one."""
    from lnetgen.write import check_replaceable

    stage = [f"stopped before writing: {out} was not touched"]
    with noted_interruption(lambda: stage[0]):
        if not force:  # a refused --out is refused before the solve (5 s on Blue Waters)
            check_replaceable(out, "generate")
        _generate(site, strategy, plan_path, out, formats, force, fmt, quiet, keep_path, stage)


def _generate(
    site: str,
    strategy: str | None,
    plan_path: str | None,
    out: str,
    formats: str | None,
    force: bool,
    fmt: str,
    quiet: bool,
    keep_path: str | None,
    stage: list[str],
) -> None:
    import json

    from lnetgen.api import generate as gen_fn
    from lnetgen.api import write_output

    gen = gen_fn(site, strategy, formats, plan_path, force=force, keep_path=keep_path)
    _print_diags(gen.warnings)
    before = len(gen.warnings)
    # files are rendered as they are written: the emitters' warnings come after the write
    result = write_output(gen, out, force=force, progress=progress_bars(quiet))
    stage[0] = f"stopped after writing: {out} holds the new tree"
    gen.warnings.extend(_overwritten(out, result))
    _print_diags(gen.warnings[before:])
    for line in saved_warnings(out, result):
        click.echo(line, err=True)
    if fmt == "json":
        doc = {
            "out": out,
            "strategy": gen.plan.strategy,
            "files": len(gen.records),
            "written": sorted(result.written),
            "unchanged": sorted(result.unchanged),
            "removed": sorted(result.removed),
            "saved": result.saved,
            "recovered": list(result.recovered),
            "overwritten": list(result.overwritten),
            "kept": result.kept,
            "skipped": dict(sorted(gen.skipped.items())),
            "warnings": [d.as_dict() for d in gen.warnings],
        }
        click.echo(json.dumps(doc, indent=1, sort_keys=True))
        return
    click.echo(
        f"{out}: {len(gen.records)} files ({len(result.written)} written, "
        f"{len(result.unchanged)} unchanged, {len(result.removed)} removed"
        + (f", {len(result.overwritten)} hand-edited overwritten" if result.overwritten else "")
        + f"); strategy {gen.plan.strategy}"
    )
    for name, reason in sorted(gen.skipped.items()):
        click.echo(f"  {name}: skipped ({reason})", err=True)


def _overwritten(out: str, result: WriteResult) -> list[Diagnostic]:
    """A warning for each file of ``out`` edited by hand that ``--force`` replaced or removed,
    naming where its edited copy was kept (``WriteResult.kept``)."""
    import os

    gone = set(result.removed)
    return [
        Diagnostic(
            os.path.join(out, rel),
            0,
            0,
            "warning",
            "W-OUTPUT-OVERWRITTEN",
            "$",
            f"edited by hand since lnetgen wrote it: --force "
            f"{'removed' if rel in gone else 'replaced'} it; the edited copy is kept as "
            f"{os.path.join(result.kept, rel)}",
        )
        for rel in result.overwritten
    ]


# ---- command families in their own modules
from lnetgen.cli import fabric as _fabric  # noqa: E402

main.add_command(_fabric.command)
from lnetgen.cli import diff as _diff  # noqa: E402

main.add_command(_diff.command, "diff")
from lnetgen.cli import verify as _verify  # noqa: E402

main.add_command(_verify.command, "verify")
from lnetgen.cli import analyze as _analyze  # noqa: E402

for _cmd in _analyze.COMMANDS:
    main.add_command(_cmd)
from lnetgen.cli import compare as _compare  # noqa: E402

main.add_command(_compare.compare_cmd)
from lnetgen.cli import report as _report  # noqa: E402

main.add_command(_report.command)
from lnetgen.cli import collect as _collect  # noqa: E402

main.add_command(_collect.command)
from lnetgen.cli import advise as _advise  # noqa: E402

main.add_command(_advise.advise_group)
