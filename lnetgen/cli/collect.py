"""``lnetgen collect``: gather ``lnetctl export --backup``, ``lnetctl net show`` (the NIDs) and
the modprobe ``lnet`` options from every host of a node set into a directory ``lnetgen diff
--live`` reads."""

from __future__ import annotations

import sys

import click

from lnetgen.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    TEXT,
    NonEmptyPath,
    Number,
    handles_input_errors,
    saved_warnings,
)


@click.command("collect")
@click.argument("nodeset")
@click.option(
    "--out",
    "-o",
    "out",
    required=True,
    type=NonEmptyPath(file_okay=False),
    help="directory to write (replaced atomically; only an earlier collect's files are replaced)",
)
@click.option(
    "--fanout",
    type=click.IntRange(1, 4096),
    default=64,
    show_default=True,
    help="hosts contacted at the same time (ClusterShell's fanout)",
)
@click.option(
    "--timeout",
    type=Number(0, 3600, min_open=True),
    default=30.0,
    show_default=True,
    help="seconds each host may take",
)
@click.option(
    "--exec",
    "local",
    is_flag=True,
    help="run the commands on this machine (ClusterShell's exec worker), %h (or %{h}) standing "
    "for the host: for a wrapper such as --command 'ssh -J gw %h lnetctl export --backup'; "
    "any other % is kept as written",
)
@click.option(
    "--command",
    "export_command",
    type=TEXT,
    default=None,
    metavar="CMD",
    help="the export command (default: lnetctl export --backup)",
)
@click.option(
    "--modprobe-command",
    type=TEXT,
    default=None,
    metavar="CMD",
    help="the command printing the modprobe options (default: cat /etc/modprobe.d/*lnet*)",
)
@click.option(
    "--net-command",
    type=TEXT,
    default=None,
    metavar="CMD",
    help="the command printing the NIDs, which export --backup leaves out (default: lnetctl "
    "net show)",
)
@handles_input_errors(writes=True)
def command(
    nodeset: str,
    out: str,
    fanout: int,
    timeout: float,
    local: bool,
    export_command: str | None,
    modprobe_command: str | None,
    net_command: str | None,
) -> None:
    """Run `lnetctl export --backup` and `lnetctl net show` on every host of NODESET in parallel
    (ClusterShell, ssh) and write the dumps of each host into --out (<host>.yaml, <host>.net.yaml
    for its NIDs, which --backup leaves out, <host>.conf for modprobe options), failed.txt and
    manifest.json: the directory `lnetgen diff SITE --live DIR` compares.  A host whose net show
    fails is collected without its NIDs (said on stderr; diff does not compare them).

    A host's command that prints more than 16 MiB is killed and the host fails.  What a host
    printed waits in a temporary file without a name (in TMPDIR, freed when collect ends) from
    the end of its command until it is written, so memory holds at most --fanout hosts' output.
    Each command runs in a process group of its own, killed whole when its host times out or
    the run is interrupted (Ctrl-C, kill).

    Exit status: 0 every host answered, 1 some failed, timed out or printed too much (listed in
    failed.txt and on stderr; the others are written), 2 usage or a refused output.
    """
    from lnetgen import nodes
    from lnetgen.api import write_tree
    from lnetgen.collect import (
        EXPORT_COMMAND,
        MODPROBE_COMMAND,
        NET_COMMAND,
        collect,
        collected_files,
        parse_hosts,
    )
    from lnetgen.write import check_replaceable

    hosts = parse_hosts(nodeset)
    # refused before a single host is contacted: checked only at the write, a refused --out
    # threw away everything the run had gathered (write_tree checks again under its lock)
    check_replaceable(out, "collect")
    with collect(
        hosts,
        fanout=fanout,
        timeout=timeout,
        local=local,
        export_command=export_command or EXPORT_COMMAND,
        modprobe_command=modprobe_command or MODPROBE_COMMAND,
        net_command=net_command or NET_COMMAND,
    ) as result:  # the dumps are spooled to TMPDIR until written, one at a time
        written = write_tree(out, collected_files(result, nodeset), kind="collect")
    for line in saved_warnings(out, written):  # files not lnetgen's are never deleted
        click.echo(line, err=True)
    for host, why in sorted(result.failed.items()):
        click.echo(f"lnetgen: {host}: {why}", err=True)
    for host, why in sorted(result.no_nids.items()):
        click.echo(f"lnetgen: {host}: NIDs not collected (net show: {why})", err=True)
    ok = len(hosts) - len(result.failed)
    line = f"{out}: {ok} of {len(hosts)} host(s) collected"
    if result.failed:
        timed = len(result.timed_out & set(result.failed))
        line += f"; failed: {nodes.fold(result.failed)} ({timed} timed out)"
    click.echo(line)
    sys.exit(EXIT_FINDINGS if result.failed else EXIT_OK)
