"""``lnetgen verify``: prove a generated tree (or live dumps) deployable, file system by file
system; print the findings and the pairs checked."""

from __future__ import annotations

import json
import sys

import click

from lnetgen.cli.common import EXIT_INPUT, handles_input_errors, progress_bars, quiet_option


@click.command("verify")
@click.argument("out_dir", required=False, type=click.Path(file_okay=False))
@click.option(
    "--live",
    "live_path",
    metavar="PATH",
    help="verify live dumps instead (a directory of per-host dumps, as `diff --live` reads "
    "them); roles and file systems come from OUT_DIR's manifest or --manifest",
)
@click.option(
    "--manifest",
    "manifest",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="the manifest.json to take roles and file systems from (default OUT_DIR/manifest.json)",
)
@click.option(
    "--hosts",
    metavar="NODESET",
    help="check only pairs with an end in NODESET (ClusterShell syntax, e.g. nid[00001-00100])",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--ping-plan",
    "ping_plan",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="write the `clush -w ... lnetctl ping <nid>` lines that confirm the proof on the "
    "deployed system",
)
@quiet_option
@handles_input_errors(EXIT_INPUT, writes=False)
def command(
    out_dir: str | None,
    live_path: str | None,
    manifest: str | None,
    hosts: str | None,
    fmt: str,
    ping_plan: str | None,
    quiet: bool,
) -> None:
    """Prove that the files of OUT_DIR make every file system work.

    Reads the per-host lnetctl YAML (modprobe where YAML is absent) and manifest.json, not
    plan.json.  Per file system: every client class reaches every server and MGS NID, every
    server reaches every other server and every client class, through routes whose gateway is
    a forwarding router on both nets (hop 1), with replies through the same routers.

    Exit status: 0 proved, 1 findings (an error), 2 unusable input (no manifest or no
    "filesystems" in it, unreadable tree, bad option).
    """
    from lnetgen.api import verify
    from lnetgen.verify import format_text, to_dict
    from lnetgen.write import write_file

    result = verify(
        out_dir,
        live=live_path,
        manifest=manifest,
        hosts=hosts,
        ping=ping_plan is not None,
        progress=progress_bars(quiet),
    )
    if ping_plan:
        write_file(ping_plan, "\n".join(result.ping) + "\n")
    if fmt == "json":
        click.echo(json.dumps(to_dict(result), indent=1, sort_keys=True))
    else:
        click.echo(format_text(result), nl=False)
    sys.exit(result.exit_code)
