"""``lnetgen verify``: prove a generated tree (or live dumps) deployable, file system by file
system; print the findings and the pairs checked."""

from __future__ import annotations

import contextlib
import json
import os
import sys

import click

from lnetgen.cli.common import (
    EXIT_INPUT,
    TEXT,
    NonEmptyPath,
    handles_input_errors,
    progress_bars,
    quiet_option,
)
from lnetgen.cli.nodesets import bounded_nodeset


def _ancestors(path: str) -> list[tuple[str, os.stat_result]]:
    """``path`` (symbolic links resolved) and every directory above it, those that exist."""
    out = []
    at = os.path.realpath(path)
    while True:
        with contextlib.suppress(OSError):
            out.append((at, os.stat(at)))
        parent = os.path.dirname(at)
        if parent == at:
            return out
        at = parent


def check_ping_plan(path: str, out_dir: str | None, live: str | None, manifest: str | None) -> None:
    """Refuse (``--ping-plan``, exit 2) a ping plan that would land in what ``verify`` reads:
    inside OUT_DIR (it replaced a file of the generated tree, or added one, and the next
    ``generate`` refused the tree as edited), inside the ``--live`` directory (the next run
    would read it as a dump), or on the ``--live`` or ``--manifest`` file.  Paths are
    compared after resolving symbolic links, by device and inode, so another spelling of the
    same place (a link, ``..``, a hard link to the manifest) is caught too.

    Anywhere else the plan is written, and an existing file there is replaced (atomically,
    by ``write_file``): that is what naming it asks for, as ``-o`` does in other commands,
    and ``write_file`` still refuses a symbolic link, a directory or a file this run read."""
    real = os.path.realpath(path)
    above = _ancestors(path)
    for what, given in (("OUT_DIR", out_dir), ("--live", live), ("--manifest", manifest)):
        if given is None:
            continue
        try:
            st = os.stat(given)
        except OSError:
            continue  # verify reports a missing input itself
        for at, a in above:
            if os.path.samestat(st, a):
                where = "is" if at == real else "is inside"
                raise click.BadParameter(
                    f"{path} {where} {what} {given}, which verify reads: write the ping plan "
                    "outside it",
                    param_hint="--ping-plan",
                )


@click.command("verify")
@click.argument("out_dir", required=False, type=NonEmptyPath(file_okay=False))
@click.option(
    "--live",
    "live_path",
    metavar="PATH",
    type=NonEmptyPath(),
    help="verify live dumps instead (a directory of per-host dumps, as `diff --live` reads "
    "them); roles and file systems come from OUT_DIR's manifest or --manifest",
)
@click.option(
    "--manifest",
    "manifest",
    metavar="FILE",
    type=NonEmptyPath(dir_okay=False),
    help="the manifest.json to take roles and file systems from (default OUT_DIR/manifest.json)",
)
@click.option(
    "--hosts",
    metavar="NODESET",
    type=TEXT,
    callback=bounded_nodeset,
    help="check only pairs with an end in NODESET (ClusterShell syntax, e.g. nid[00001-00100])",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--ping-plan",
    "ping_plan",
    metavar="FILE",
    type=NonEmptyPath(dir_okay=False),
    help="write the `clush -w ... lnetctl ping <nid>` lines that confirm the proof on the "
    "deployed system (outside OUT_DIR and the --live directory)",
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

    if ping_plan is not None:
        check_ping_plan(ping_plan, out_dir, live_path, manifest)
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
